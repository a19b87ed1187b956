C     shallow_mpi.f -- the shallow-water program of
C     svmfortran/compile/testdata/programs/shallow.f written with
C     hand-written MPI: the yardstick's MPI column for shallow water.
C     The same grid, initial state, scheme, time filter and periodic
C     continuation, and the same output bit for bit as shallow.f built
C     by gfortran alone (svmf build -nodist).
C
C     Usage:  mpirun -np P shallow_mpi [N [ITMAX]]   (default N = 64,
C     ITMAX = 50, N at most NMAX = 1024, as shallow.f).
C
C     Decomposition: the columns J = 1..N+1 in blocks of CEIL((N+1)/P),
C     as shallow.f's TCOL(N+1) BLOCK distribution; rank R owns columns
C     JLO..JHI.  The grid is periodic in J with period N (column N+1 is
C     the copy of column 1), so a rank computes the distinct columns it
C     owns, JLO..JOWN = MIN(JHI, N), and holds one halo column each
C     side, JLO-1 and JOWN+1; column 0 stands for column N and column
C     N+1 is column 1.  Every array has leading dimension N+1 and the
C     columns JLO-1..JOWN+1.  Once a step the halo columns of U, V and
C     P come from the neighbours (MPI_Sendrecv of contiguous columns;
C     the wrap in J couples the first and the last rank).  The flux
C     loop also computes CU and H in the left halo column and CV and Z
C     in the right one (the same expressions on the same values), so
C     CU, CV, Z and H need no exchange.  The periodic copies in I are
C     local.  Every value is computed with shallow.f's expression from
C     the same operands, so every value is the same bit for bit.
C
C     The checksums as shallow.f: every column summed in order by its
C     owner, the column sums gathered to rank 0 and added there in
C     column order.  Only rank 0 prints.
      PROGRAM SHALLOWMPI
      USE MPI
      IMPLICIT NONE
      INTEGER NMAX, NDEF, ITDEF
      PARAMETER (NMAX = 1024, NDEF = 64, ITDEF = 50)
      INTEGER N, ITMAX, NARG, IOS, IERR, RANK, NP, NB, R
      INTEGER JLO, JHI, JOWN, JA, JB, LEFT, RIGHT
      INTEGER OWNER
      CHARACTER*32 ARG
      REAL*8, ALLOCATABLE :: U(:,:), V(:,:), P(:,:)
      REAL*8, ALLOCATABLE :: UNEW(:,:), VNEW(:,:), PNEW(:,:)
      REAL*8, ALLOCATABLE :: UOLD(:,:), VOLD(:,:), POLD(:,:)
      REAL*8, ALLOCATABLE :: CU(:,:), CV(:,:), Z(:,:), H(:,:)
      REAL*8, ALLOCATABLE :: CS(:,:), CSALL(:,:)
      INTEGER, ALLOCATABLE :: COUNTS(:), DISPLS(:)

      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NP, IERR)

C     problem size from the command line: every rank reads the same
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

C     BLOCK of TCOL(N+1): rank R owns R*NB+1 .. MIN((R+1)*NB, N+1)
      NB = (N + 1 + NP - 1) / NP
      JLO = RANK * NB + 1
      JHI = MIN((RANK + 1) * NB, N + 1)
      JOWN = MIN(JHI, N)
C     the neighbours in the ring of the columns 1..N: the owners of
C     column JLO-1 (N if JLO = 1) and of column JOWN+1 (1 if JOWN = N);
C     a rank that owns none of 1..N (at most column N+1) takes no part
      IF (JLO .LE. JOWN) THEN
         LEFT = OWNER(MOD(JLO - 2 + N, N) + 1, NB)
         RIGHT = OWNER(MOD(JOWN, N) + 1, NB)
         JA = JLO - 1
         JB = JOWN + 1
      ELSE
         LEFT = MPI_PROC_NULL
         RIGHT = MPI_PROC_NULL
         JLO = 1
         JOWN = 0
         JA = 0
         JB = 1
      END IF

      ALLOCATE(U(N + 1, JA:JB), V(N + 1, JA:JB), P(N + 1, JA:JB))
      ALLOCATE(UNEW(N + 1, JA:JB), VNEW(N + 1, JA:JB))
      ALLOCATE(PNEW(N + 1, JA:JB))
      ALLOCATE(UOLD(N + 1, JA:JB), VOLD(N + 1, JA:JB))
      ALLOCATE(POLD(N + 1, JA:JB))
      ALLOCATE(CU(N + 1, JA:JB), CV(N + 1, JA:JB), Z(N + 1, JA:JB))
      ALLOCATE(H(N + 1, JA:JB))
      ALLOCATE(CS(6, JA:JB), CSALL(6, N), COUNTS(NP), DISPLS(NP))
C     the column sums each rank sends to rank 0: its columns of 1..N
      DO R = 1, NP
         DISPLS(R) = 6 * MIN((R - 1) * NB, N)
         COUNTS(R) = 6 * MIN(R * NB, N) - DISPLS(R)
      END DO

      CALL RUN(N, ITMAX, JA, JB, JLO, JOWN, LEFT, RIGHT, RANK,
     &     U, V, P, UNEW, VNEW, PNEW, UOLD, VOLD, POLD,
     &     CU, CV, Z, H, CS, CSALL, COUNTS, DISPLS)

      CALL MPI_FINALIZE(IERR)
      END

C     OWNER: the rank that owns column J under BLOCK of NB columns.
      INTEGER FUNCTION OWNER(J, NB)
      IMPLICIT NONE
      INTEGER J, NB
      OWNER = (J - 1) / NB
      END

C     RUN: shallow.f's executable part on the columns JA..JB of every
C     array, of which the rank computes JLO..JOWN (JA = JLO-1 and
C     JB = JOWN+1 are the halo columns).
      SUBROUTINE RUN(N, ITMAX, JA, JB, JLO, JOWN, LEFT, RIGHT, RANK,
     &     U, V, P, UNEW, VNEW, PNEW, UOLD, VOLD, POLD,
     &     CU, CV, Z, H, CS, CSALL, COUNTS, DISPLS)
      IMPLICIT NONE
      INTEGER N, ITMAX, JA, JB, JLO, JOWN, LEFT, RIGHT, RANK
      REAL*8 U(N + 1, JA:JB), V(N + 1, JA:JB), P(N + 1, JA:JB)
      REAL*8 UNEW(N + 1, JA:JB), VNEW(N + 1, JA:JB)
      REAL*8 PNEW(N + 1, JA:JB)
      REAL*8 UOLD(N + 1, JA:JB), VOLD(N + 1, JA:JB)
      REAL*8 POLD(N + 1, JA:JB)
      REAL*8 CU(N + 1, JA:JB), CV(N + 1, JA:JB), Z(N + 1, JA:JB)
      REAL*8 H(N + 1, JA:JB)
      REAL*8 CS(6, JA:JB), CSALL(6, N)
      INTEGER COUNTS(*), DISPLS(*)
      INTEGER NPRINT
      PARAMETER (NPRINT = 25)
      INTEGER NCYCLE, I, J, JF
      REAL*8 DT, DX, DY, A, ALPHA, PI, DI, DJ, EL, PCF
      REAL*8 TDT, FSDX, FSDY, TDTS8, TDTSDX, TDTSDY

C     the first column of the flux loop: the left halo column, or
C     none on a rank that owns no column of 1..N
      JF = JLO - 1
      IF (JLO .GT. JOWN) JF = JOWN + 1

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

C     initial state, the rank's columns: U and P of shallow.f's
C     iteration J, V of its iteration J-1 (V(I, J+1) there); then the
C     copies in I and the halo columns
      DO J = JLO, JOWN
         DO I = 1, N
            U(I + 1, J) = -A * SIN((I + 0.5D0) * DI) *
     &           (SIN((J + 0.5D0) * DJ) - SIN((J - 0.5D0) * DJ)) / DY
            P(I, J) = PCF * (COS(2.0D0 * (I - 1) * DI)
     &           + COS(2.0D0 * (J - 1) * DJ)) + 50000.0D0
     &           + 200.0D0 * COS((I - 1) * DI + 2.0D0 * (J - 1) * DJ)
     &           * SIN((I - 1) * DI) ** 2
         END DO
      END DO
C     V(I, J) of shallow.f's iteration J-1 = N for the column J = 1
C     (its copy of column N+1)
      DO J = JLO, JOWN
         CALL INITV(V(1, J), N, MOD(J - 2 + N, N) + 1, A, DI, DJ, DX)
      END DO
      CALL WRAPI(U, V, P, N, JA, JB, JLO, JOWN)
      CALL HALO(U, V, P, N, JA, JB, JLO, JOWN, LEFT, RIGHT)

      DO J = JLO, JOWN
         DO I = 1, N + 1
            UOLD(I, J) = U(I, J)
            VOLD(I, J) = V(I, J)
            POLD(I, J) = P(I, J)
         END DO
      END DO

      IF (RANK .EQ. 0) THEN
         WRITE(*,'(A,I5,A,I5,A,I5)') 'shallow N = ', N, ' x ', N,
     &        '  steps = ', ITMAX
         WRITE(*,'(A)') 'shallow  step  sums over the grid of P, U, V'
     &        // ' and of |U|, |V|, P*P'
      END IF
      NCYCLE = 0
      CALL SUMS(U, V, P, N, JA, JB, JLO, JOWN, RANK, NCYCLE,
     &     CS, CSALL, COUNTS, DISPLS)

      TDT = DT
      DO NCYCLE = 1, ITMAX
         FSDX = 4.0D0 / DX
         FSDY = 4.0D0 / DY

C        mass fluxes, potential vorticity, Bernoulli function: the
C        iterations JLO-1..JOWN of shallow.f's loop, which give CU and
C        H in the columns JLO-1..JOWN and CV and Z in JLO..JOWN+1, from
C        U, V and P in JLO-1..JOWN+1
         DO J = JF, JOWN
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
C        periodic copies in I; those in J are the halo columns above
         DO J = JF, JOWN
            CU(1, J) = CU(N + 1, J)
            CV(N + 1, J + 1) = CV(1, J + 1)
            Z(1, J + 1) = Z(N + 1, J + 1)
            H(N + 1, J) = H(1, J)
         END DO

C        new values by the leapfrog step over 2 DT (forward step the
C        first time): UNEW and PNEW of shallow.f's iteration J, VNEW
C        of its iteration J-1
         TDTS8 = TDT / 8.0D0
         TDTSDX = TDT / DX
         TDTSDY = TDT / DY
         DO J = JLO, JOWN
            DO I = 1, N
               UNEW(I + 1, J) = UOLD(I + 1, J) + TDTS8
     &              * (Z(I + 1, J + 1) + Z(I + 1, J))
     &              * (CV(I + 1, J + 1) + CV(I, J + 1) + CV(I, J)
     &              + CV(I + 1, J))
     &              - TDTSDX * (H(I + 1, J) - H(I, J))
               VNEW(I, J) = VOLD(I, J) - TDTS8
     &              * (Z(I + 1, J) + Z(I, J))
     &              * (CU(I + 1, J) + CU(I, J) + CU(I, J - 1)
     &              + CU(I + 1, J - 1))
     &              - TDTSDY * (H(I, J) - H(I, J - 1))
               PNEW(I, J) = POLD(I, J)
     &              - TDTSDX * (CU(I + 1, J) - CU(I, J))
     &              - TDTSDY * (CV(I, J + 1) - CV(I, J))
            END DO
         END DO
         CALL WRAPI(UNEW, VNEW, PNEW, N, JA, JB, JLO, JOWN)

C        time filter and shift of the time levels, the rank's columns
         IF (NCYCLE .GT. 1) THEN
            DO J = JLO, JOWN
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
            DO J = JLO, JOWN
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
         CALL HALO(U, V, P, N, JA, JB, JLO, JOWN, LEFT, RIGHT)

         IF (MOD(NCYCLE, NPRINT) .EQ. 0 .OR. NCYCLE .EQ. ITMAX) THEN
            CALL SUMS(U, V, P, N, JA, JB, JLO, JOWN, RANK, NCYCLE,
     &           CS, CSALL, COUNTS, DISPLS)
         END IF
      END DO
      END

C     INITV: a column of the initial V, as shallow.f's iteration J
C     computes V(I, J+1).
      SUBROUTINE INITV(VCOL, N, J, A, DI, DJ, DX)
      IMPLICIT NONE
      INTEGER N, J, I
      REAL*8 VCOL(N + 1), A, DI, DJ, DX
      DO I = 1, N
         VCOL(I) = A * SIN((J + 0.5D0) * DJ) *
     &        (SIN((I + 0.5D0) * DI) - SIN((I - 0.5D0) * DI)) / DX
      END DO
      END

C     WRAPI: the periodic copies in I of a (U, V, P) triple in the
C     rank's columns, as shallow.f's WRAPUV makes them.
      SUBROUTINE WRAPI(U, V, P, N, JA, JB, JLO, JOWN)
      IMPLICIT NONE
      INTEGER N, JA, JB, JLO, JOWN, J
      REAL*8 U(N + 1, JA:JB), V(N + 1, JA:JB), P(N + 1, JA:JB)
      DO J = JLO, JOWN
         U(1, J) = U(N + 1, J)
         V(N + 1, J) = V(1, J)
         P(N + 1, J) = P(1, J)
      END DO
      END

C     HALO: the halo columns of a (U, V, P) triple from the neighbours.
C     With one rank both neighbours are the rank itself.
      SUBROUTINE HALO(U, V, P, N, JA, JB, JLO, JOWN, LEFT, RIGHT)
      IMPLICIT NONE
      INTEGER N, JA, JB, JLO, JOWN, LEFT, RIGHT
      REAL*8 U(N + 1, JA:JB), V(N + 1, JA:JB), P(N + 1, JA:JB)
      CALL SWAP(U, N, JA, JB, JLO, JOWN, LEFT, RIGHT, 1)
      CALL SWAP(V, N, JA, JB, JLO, JOWN, LEFT, RIGHT, 2)
      CALL SWAP(P, N, JA, JB, JLO, JOWN, LEFT, RIGHT, 3)
      END

C     SWAP: the halo columns of one array: the rank's first column goes
C     to the left neighbour's right halo, its last to the right
C     neighbour's left halo.  TAG tells the arrays' messages apart.
      SUBROUTINE SWAP(A, N, JA, JB, JLO, JOWN, LEFT, RIGHT, TAG)
      USE MPI
      IMPLICIT NONE
      INTEGER N, JA, JB, JLO, JOWN, LEFT, RIGHT, TAG, IERR
      REAL*8 A(N + 1, JA:JB)
      CALL MPI_SENDRECV(A(1, JLO), N + 1, MPI_DOUBLE_PRECISION, LEFT,
     &     TAG, A(1, JB), N + 1, MPI_DOUBLE_PRECISION, RIGHT, TAG,
     &     MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
      CALL MPI_SENDRECV(A(1, JOWN), N + 1, MPI_DOUBLE_PRECISION, RIGHT,
     &     TAG + 3, A(1, JA), N + 1, MPI_DOUBLE_PRECISION, LEFT,
     &     TAG + 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE, IERR)
      END

C     SUMS: shallow.f's COLSUM and its output.  The sums of P, U, V,
C     |U|, |V| and P*P over each of the rank's columns of 1..N (rows
C     1..N), each summed in order; rank 0 gathers the column sums, adds
C     them in column order and prints.
      SUBROUTINE SUMS(U, V, P, N, JA, JB, JLO, JOWN, RANK, NCYCLE,
     &     CS, CSALL, COUNTS, DISPLS)
      USE MPI
      IMPLICIT NONE
      INTEGER N, JA, JB, JLO, JOWN, RANK, NCYCLE
      REAL*8 U(N + 1, JA:JB), V(N + 1, JA:JB), P(N + 1, JA:JB)
      REAL*8 CS(6, JA:JB), CSALL(6, N)
      INTEGER COUNTS(*), DISPLS(*)
      INTEGER I, J, K, IERR
      REAL*8 S(6), SP, SU, SV, SAU, SAV, SPP
      DO J = JLO, JOWN
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
            CS(K, J) = S(K)
         END DO
      END DO
      CALL MPI_GATHERV(CS(1, JLO), 6 * (JOWN - JLO + 1),
     &     MPI_DOUBLE_PRECISION, CSALL, COUNTS, DISPLS,
     &     MPI_DOUBLE_PRECISION, 0, MPI_COMM_WORLD, IERR)
      IF (RANK .NE. 0) RETURN
      SP = 0
      SU = 0
      SV = 0
      SAU = 0
      SAV = 0
      SPP = 0
      DO J = 1, N
         SP = SP + CSALL(1, J)
         SU = SU + CSALL(2, J)
         SV = SV + CSALL(3, J)
         SAU = SAU + CSALL(4, J)
         SAV = SAV + CSALL(5, J)
         SPP = SPP + CSALL(6, J)
      END DO
      WRITE(*,900) 'shallow', NCYCLE, ' P U V    ', SP, SU, SV
      WRITE(*,900) 'shallow', NCYCLE, ' |U| |V| PP', SAU, SAV, SPP
  900 FORMAT(A, I6, A, 3ES24.16)
      END
