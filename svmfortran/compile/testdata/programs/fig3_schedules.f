C     fig3_schedules.f -- the paper's Figure 3: template distribution
C     and loop scheduling, direct (BLOCK, CYCLIC(3)), predefined
C     (ON_HOME(T(I)), ON_HOME(T(I+1))), dynamic (DYNAMIC(5)) and
C     semi-dynamic (SEMI_DYNAMIC(T2, 4), the loop run twice so that the
C     second run replays the recorded schedule), with a
C     REDISTRIBUTE (CYCLIC(7)) of T in between.
C
C     Every loop also counts its iterations in CNT, so the output shows
C     that each iteration of each loop ran exactly once.  N = 10007 is
C     prime: no processor count divides it.  Integer data: exact output.
      PROGRAM FIG3
      IMPLICIT NONE
      INTEGER N, NLOOPS
      PARAMETER (N = 10007, NLOOPS = 8)
      INTEGER A(N), B(N), C(N), D(N), E(N), F(N), G(N), CNT(N)
      INTEGER*8 DSUM
CSVM$ SHARED:: A, B, C, D, E, F, G, CNT, DSUM
      INTEGER I, J, ITER, NBAD
      INTEGER*8 PART, CK(7)

CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: T(N)
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: T
CSVM$ TEMPLATE:: T2(N)

CSVM$ EXCLUSIVE_REGION
      DSUM = 0
CSVM$ EXCLUSIVE_REGION_END

C     -- direct scheduling --
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
      DO I = 1, N
         A(I) = MOD(I * 13, 1000)
         E(I) = 0
         CNT(I) = 1
      END DO

C     -- predefined scheduling --
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(T(I))))
      DO I = 1, N
         B(I) = A(I) + MOD(2 * I, 7)
         CNT(I) = CNT(I) + 1
      END DO

CSVM$ PDO (LOOPS(I), STRATEGY(CYCLIC(3)))
      DO I = 1, N
         C(I) = A(I) - B(I) + A(N + 1 - I)
         CNT(I) = CNT(I) + 1
      END DO

C     -- dynamic scheduling, uneven work, a reduction in CRITICAL --
      PART = 0
CSVM$ PDO (LOOPS(I), STRATEGY(DYNAMIC(5)))
      DO I = 1, N
         D(I) = 0
         DO J = 1, MOD(I, 97)
            D(I) = D(I) + MOD(I * J, 11)
         END DO
         PART = PART + D(I)
         CNT(I) = CNT(I) + 1
      END DO
CSVM$ CRITICAL DSUMCS
      DSUM = DSUM + PART
CSVM$ CRITICAL_END DSUMCS

C     -- semi-dynamic: dynamic the first time, replayed the second --
      DO ITER = 1, 2
CSVM$ PDO (LOOPS(I), STRATEGY(SEMI_DYNAMIC(T2, 4)))
         DO I = 1, N
            DO J = 1, MOD(I, 89)
               E(I) = E(I) + MOD(J * ITER, 5)
            END DO
            E(I) = E(I) + ITER * B(I)
            CNT(I) = CNT(I) + 1
         END DO
      END DO

CSVM$ REDISTRIBUTE (CYCLIC(7)) ONTO P:: T

CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(T(I))))
      DO I = 1, N
         F(I) = C(I) + D(I) - E(I)
         CNT(I) = CNT(I) + 1
      END DO

C     offset in the ON_HOME clause: iteration I runs where T(I+1) is
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(T(I + 1))))
      DO I = 0, N - 1
         G(I + 1) = F(I + 1) + I
         CNT(I + 1) = CNT(I + 1) + 1
      END DO

CSVM$ EXCLUSIVE_REGION
      DO J = 1, 7
         CK(J) = 0
      END DO
      NBAD = 0
      DO I = 1, N
         CK(1) = CK(1) + INT(A(I), 8) * I
         CK(2) = CK(2) + INT(B(I), 8) * I
         CK(3) = CK(3) + INT(C(I), 8) * I
         CK(4) = CK(4) + INT(D(I), 8) * I
         CK(5) = CK(5) + INT(E(I), 8) * I
         CK(6) = CK(6) + INT(F(I), 8) * I
         CK(7) = CK(7) + INT(G(I), 8) * I
         IF (CNT(I) .NE. NLOOPS) NBAD = NBAD + 1
      END DO
      WRITE(*,'(A,I20)') 'fig3 BLOCK          A: ', CK(1)
      WRITE(*,'(A,I20)') 'fig3 ON_HOME(T(I))  B: ', CK(2)
      WRITE(*,'(A,I20)') 'fig3 CYCLIC(3)      C: ', CK(3)
      WRITE(*,'(A,I20)') 'fig3 DYNAMIC(5)     D: ', CK(4)
      WRITE(*,'(A,I20)') 'fig3 DYNAMIC(5) sum D: ', DSUM
      WRITE(*,'(A,I20)') 'fig3 SEMI_DYNAMIC   E: ', CK(5)
      WRITE(*,'(A,I20)') 'fig3 CYCLIC(7) T    F: ', CK(6)
      WRITE(*,'(A,I20)') 'fig3 T(I+1)         G: ', CK(7)
      WRITE(*,'(A,I20)') 'fig3 iteration count errors: ', NBAD
CSVM$ EXCLUSIVE_REGION_END
      END
