C     shallow.f -- shallow-water equations after Sadourny (1975), the
C     benchmark of the paper's section 5: the energy-conserving finite
C     difference scheme on a staggered (C) grid, periodic in both
C     directions, leapfrog time stepping with a Robert-Asselin time
C     filter.  P is the geopotential, U and V the velocities; CU, CV are
C     the mass fluxes, Z the potential vorticity, H the Bernoulli term.
C     The initial state is the classic test's steady vortex pattern plus
C     a pressure perturbation, so the flow (and the checksums) change
C     from step to step.
C
C     Usage:  shallow [N [ITMAX]]   (default N = 64, ITMAX = 50,
C     N at most NMAX = 1024).  The arguments are read in replicated
C     code, so every processor reads the same values: no I/O needed.
C     Arrays are declared with the maximum size (leading dimension
C     NMAX+1) and only 1..N+1 is used.
C
C     Exercises: an empty TEMPLATE created at run time (CREATE
C     TCOL(N+1)) and distributed in the executable part; PDOs with
C     ON_HOME(TCOL(J)) and ON_HOME(TCOL(J+1)) over the column loop of
C     each loop nest and BLOCK PDOs for the periodic copies, inside the
C     time loop executed by every processor; a subroutine with PDOs
C     called in replicated mode with shared arrays as arguments; an
C     EXCLUSIVE_REGION inside an IF inside the time loop (replicated
C     code: every processor takes the same branch) for the output;
C     column checksums by a PDO, added by the master in order.
C
C     Every grid value is computed by one processor with the same
C     expression as in the sequential program, and the checksums are
C     summed column by column and then over the columns in a fixed
C     order, so the output is the same bit for bit on any number of
C     processors: no tolerance.  (The plain sums of U and V stay at
C     round-off level -- the scheme conserves them -- and so are only
C     good for exact comparison; |U|, |V| and P*P carry the physics.)
      PROGRAM SHALLOW
      IMPLICIT NONE
      INTEGER NMAX, LD, NDEF, ITDEF, NPRINT
      PARAMETER (NMAX = 1024, LD = NMAX + 1)
      PARAMETER (NDEF = 64, ITDEF = 50, NPRINT = 25)
      REAL*8 U(LD, LD), V(LD, LD), P(LD, LD)
      REAL*8 UNEW(LD, LD), VNEW(LD, LD), PNEW(LD, LD)
      REAL*8 UOLD(LD, LD), VOLD(LD, LD), POLD(LD, LD)
      REAL*8 CU(LD, LD), CV(LD, LD), Z(LD, LD), H(LD, LD)
      REAL*8 CS(LD, 6)
CSVM$ SHARED:: U, V, P, UNEW, VNEW, PNEW, UOLD, VOLD, POLD
CSVM$ SHARED:: CU, CV, Z, H, CS
      INTEGER N, ITMAX, NCYCLE, I, J, NARG, IOS
      CHARACTER*32 ARG
      REAL*8 DT, DX, DY, A, ALPHA, PI, DI, DJ, EL, PCF
      REAL*8 TDT, FSDX, FSDY, TDTS8, TDTSDX, TDTSDY
      REAL*8 SP, SU, SV, SAU, SAV, SPP
CSVM$ PROCESSORS:: PR(NUMPROC())
CSVM$ TEMPLATE:: TCOL(:)

C     problem size from the command line (replicated: all processors)
      N = NDEF
      ITMAX = ITDEF
      NARG = COMMAND_ARGUMENT_COUNT()
      IF (NARG .GE. 1) THEN
         CALL GET_COMMAND_ARGUMENT(1, ARG)
         READ(ARG, *, IOSTAT = IOS) N
         IF (IOS .NE. 0) N = NDEF
      END IF
      IF (NARG .GE. 2) THEN
         CALL GET_COMMAND_ARGUMENT(2, ARG)
         READ(ARG, *, IOSTAT = IOS) ITMAX
         IF (IOS .NE. 0) ITMAX = ITDEF
      END IF
      N = MIN(MAX(N, 4), NMAX)
      ITMAX = MAX(ITMAX, 1)

CSVM$ CREATE TCOL(N + 1)
CSVM$ DISTRIBUTE (BLOCK) ONTO PR:: TCOL

C     constants of the classic test case
      DT = 90.0D0
      DX = 1.0D5
      DY = 1.0D5
      A = 1.0D6
      ALPHA = 0.001D0
      PI = 4.0D0 * ATAN(1.0D0)
      DI = 2.0D0 * PI / DBLE(N)
      DJ = 2.0D0 * PI / DBLE(N)
      EL = DBLE(N) * DX
      PCF = PI * PI * A * A / (EL * EL)

C     initial state: velocities from the stream function
C     PSI(I,J) = A SIN((I-1/2) DI) SIN((J-1/2) DJ), U = -dPSI/dy at
C     (I+1,J), V = dPSI/dx at (I,J+1); P the matching sum of cosines
C     plus a perturbation that sets off gravity waves
CSVM$ PDO (LOOPS(J), STRATEGY(ON_HOME(TCOL(J + 1))))
      DO J = 1, N
         DO I = 1, N
            U(I + 1, J) = -A * SIN((I + 0.5D0) * DI) *
     &           (SIN((J + 0.5D0) * DJ) - SIN((J - 0.5D0) * DJ)) / DY
            V(I, J + 1) = A * SIN((J + 0.5D0) * DJ) *
     &           (SIN((I + 0.5D0) * DI) - SIN((I - 0.5D0) * DI)) / DX
            P(I, J) = PCF * (COS(2.0D0 * (I - 1) * DI)
     &           + COS(2.0D0 * (J - 1) * DJ)) + 50000.0D0
     &           + 200.0D0 * COS((I - 1) * DI + 2.0D0 * (J - 1) * DJ)
     &           * SIN((I - 1) * DI) ** 2
         END DO
      END DO
      CALL WRAPUV(U, V, P, LD, N)

CSVM$ PDO (LOOPS(J), STRATEGY(ON_HOME(TCOL(J))))
      DO J = 1, N + 1
         DO I = 1, N + 1
            UOLD(I, J) = U(I, J)
            VOLD(I, J) = V(I, J)
            POLD(I, J) = P(I, J)
         END DO
      END DO

CSVM$ EXCLUSIVE_REGION
      WRITE(*,'(A,I5,A,I5,A,I5)') 'shallow N = ', N, ' x ', N,
     &     '  steps = ', ITMAX
      WRITE(*,'(A)') 'shallow  step  sums over the grid of P, U, V' //
     &     ' and of |U|, |V|, P*P'
CSVM$ EXCLUSIVE_REGION_END
      NCYCLE = 0
      CALL COLSUM(U, V, P, LD, N, CS)
CSVM$ EXCLUSIVE_REGION
      SP = 0
      SU = 0
      SV = 0
      SAU = 0
      SAV = 0
      SPP = 0
      DO J = 1, N
         SP = SP + CS(J, 1)
         SU = SU + CS(J, 2)
         SV = SV + CS(J, 3)
         SAU = SAU + CS(J, 4)
         SAV = SAV + CS(J, 5)
         SPP = SPP + CS(J, 6)
      END DO
      WRITE(*,900) 'shallow', NCYCLE, ' P U V    ',
     &     SP, SU, SV
      WRITE(*,900) 'shallow', NCYCLE, ' |U| |V| PP',
     &     SAU, SAV, SPP
CSVM$ EXCLUSIVE_REGION_END

      TDT = DT
      DO NCYCLE = 1, ITMAX
         FSDX = 4.0D0 / DX
         FSDY = 4.0D0 / DY

C        mass fluxes, potential vorticity, Bernoulli function
CSVM$ PDO (LOOPS(J), STRATEGY(ON_HOME(TCOL(J))))
         DO J = 1, N
            DO I = 1, N
               CU(I + 1, J) = 0.5D0 * (P(I + 1, J) + P(I, J))
     &              * U(I + 1, J)
               CV(I, J + 1) = 0.5D0 * (P(I, J + 1) + P(I, J))
     &              * V(I, J + 1)
               Z(I + 1, J + 1) = (FSDX * (V(I + 1, J + 1) - V(I, J + 1))
     &              - FSDY * (U(I + 1, J + 1) - U(I + 1, J)))
     &              / (P(I, J) + P(I + 1, J) + P(I + 1, J + 1)
     &              + P(I, J + 1))
               H(I, J) = P(I, J) + 0.25D0 * (U(I + 1, J) * U(I + 1, J)
     &              + U(I, J) * U(I, J) + V(I, J + 1) * V(I, J + 1)
     &              + V(I, J) * V(I, J))
            END DO
         END DO
C        periodic copies: first in I, then in J (this covers corners)
CSVM$ PDO (LOOPS(J), STRATEGY(BLOCK))
         DO J = 1, N
            CU(1, J) = CU(N + 1, J)
            CV(N + 1, J + 1) = CV(1, J + 1)
            Z(1, J + 1) = Z(N + 1, J + 1)
            H(N + 1, J) = H(1, J)
         END DO
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
         DO I = 1, N + 1
            CU(I, N + 1) = CU(I, 1)
            CV(I, 1) = CV(I, N + 1)
            Z(I, 1) = Z(I, N + 1)
            H(I, N + 1) = H(I, 1)
         END DO

C        new values by the leapfrog step over 2 DT (forward step the
C        first time)
         TDTS8 = TDT / 8.0D0
         TDTSDX = TDT / DX
         TDTSDY = TDT / DY
CSVM$ PDO (LOOPS(J), STRATEGY(ON_HOME(TCOL(J))))
         DO J = 1, N
            DO I = 1, N
               UNEW(I + 1, J) = UOLD(I + 1, J) + TDTS8
     &              * (Z(I + 1, J + 1) + Z(I + 1, J))
     &              * (CV(I + 1, J + 1) + CV(I, J + 1) + CV(I, J)
     &              + CV(I + 1, J))
     &              - TDTSDX * (H(I + 1, J) - H(I, J))
               VNEW(I, J + 1) = VOLD(I, J + 1) - TDTS8
     &              * (Z(I + 1, J + 1) + Z(I, J + 1))
     &              * (CU(I + 1, J + 1) + CU(I, J + 1) + CU(I, J)
     &              + CU(I + 1, J))
     &              - TDTSDY * (H(I, J + 1) - H(I, J))
               PNEW(I, J) = POLD(I, J)
     &              - TDTSDX * (CU(I + 1, J) - CU(I, J))
     &              - TDTSDY * (CV(I, J + 1) - CV(I, J))
            END DO
         END DO
         CALL WRAPUV(UNEW, VNEW, PNEW, LD, N)

C        time filter and shift of the time levels
         IF (NCYCLE .GT. 1) THEN
CSVM$ PDO (LOOPS(J), STRATEGY(ON_HOME(TCOL(J))))
            DO J = 1, N + 1
               DO I = 1, N + 1
                  UOLD(I, J) = U(I, J) + ALPHA * (UNEW(I, J)
     &                 - 2.0D0 * U(I, J) + UOLD(I, J))
                  VOLD(I, J) = V(I, J) + ALPHA * (VNEW(I, J)
     &                 - 2.0D0 * V(I, J) + VOLD(I, J))
                  POLD(I, J) = P(I, J) + ALPHA * (PNEW(I, J)
     &                 - 2.0D0 * P(I, J) + POLD(I, J))
                  U(I, J) = UNEW(I, J)
                  V(I, J) = VNEW(I, J)
                  P(I, J) = PNEW(I, J)
               END DO
            END DO
         ELSE
            TDT = TDT + TDT
CSVM$ PDO (LOOPS(J), STRATEGY(ON_HOME(TCOL(J))))
            DO J = 1, N + 1
               DO I = 1, N + 1
                  UOLD(I, J) = U(I, J)
                  VOLD(I, J) = V(I, J)
                  POLD(I, J) = P(I, J)
                  U(I, J) = UNEW(I, J)
                  V(I, J) = VNEW(I, J)
                  P(I, J) = PNEW(I, J)
               END DO
            END DO
         END IF

         IF (MOD(NCYCLE, NPRINT) .EQ. 0 .OR. NCYCLE .EQ. ITMAX) THEN
            CALL COLSUM(U, V, P, LD, N, CS)
CSVM$ EXCLUSIVE_REGION
            SP = 0
            SU = 0
            SV = 0
            SAU = 0
            SAV = 0
            SPP = 0
            DO J = 1, N
               SP = SP + CS(J, 1)
               SU = SU + CS(J, 2)
               SV = SV + CS(J, 3)
               SAU = SAU + CS(J, 4)
               SAV = SAV + CS(J, 5)
               SPP = SPP + CS(J, 6)
            END DO
            WRITE(*,900) 'shallow', NCYCLE, ' P U V    ',
     &           SP, SU, SV
            WRITE(*,900) 'shallow', NCYCLE, ' |U| |V| PP',
     &           SAU, SAV, SPP
CSVM$ EXCLUSIVE_REGION_END
         END IF
      END DO
  900 FORMAT(A, I6, A, 3ES24.16)
      END

C     WRAPUV: periodic continuation of a (U, V, P) triple.  U lives at
C     I = 2..N+1, J = 1..N; V at I = 1..N, J = 2..N+1; P at 1..N, 1..N.
C     Called in replicated mode: every processor joins both PDOs.
      SUBROUTINE WRAPUV(U, V, P, LD, N)
      IMPLICIT NONE
      INTEGER LD, N
      REAL*8 U(LD, LD), V(LD, LD), P(LD, LD)
      INTEGER I, J
CSVM$ PDO (LOOPS(J), STRATEGY(BLOCK))
      DO J = 1, N
         U(1, J) = U(N + 1, J)
         V(N + 1, J + 1) = V(1, J + 1)
         P(N + 1, J) = P(1, J)
      END DO
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
      DO I = 1, N + 1
         U(I, N + 1) = U(I, 1)
         V(I, 1) = V(I, N + 1)
         P(I, N + 1) = P(I, 1)
      END DO
      END

C     COLSUM: the sums of P, U, V, |U|, |V| and P*P over each column
C     J = 1..N of the N x N grid (rows 1..N), each column summed in
C     order by one processor.  Called in replicated mode; the master
C     adds the column sums in order, so the checksums do not depend on
C     the number of processors.
      SUBROUTINE COLSUM(U, V, P, LD, N, CS)
      IMPLICIT NONE
      INTEGER LD, N
      REAL*8 U(LD, LD), V(LD, LD), P(LD, LD), CS(LD, 6)
      INTEGER I, J, K
      REAL*8 S(6)
CSVM$ PDO (LOOPS(J), STRATEGY(BLOCK))
      DO J = 1, N
         DO K = 1, 6
            S(K) = 0
         END DO
         DO I = 1, N
            S(1) = S(1) + P(I, J)
            S(2) = S(2) + U(I, J)
            S(3) = S(3) + V(I, J)
            S(4) = S(4) + ABS(U(I, J))
            S(5) = S(5) + ABS(V(I, J))
            S(6) = S(6) + P(I, J) * P(I, J)
         END DO
         DO K = 1, 6
            CS(J, K) = S(K)
         END DO
      END DO
      END
