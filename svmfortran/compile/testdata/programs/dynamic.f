C     dynamic.f -- dynamic loop scheduling (self scheduling, paper
C     section 3) of triangular loop nests whose iterations do very
C     different amounts of work, with a PAGE_LOCK-protected update.
C
C     Exercises: STRATEGY(DYNAMIC(2)) on LOOPS(I) with a triangular
C     inner loop; STRATEGY(DYNAMIC(2)) on a tightly nested triangular
C     pair of labelled DO loops, LOOPS(I, J) with J = I..N2 (chunks of
C     the outermost loop); a shared histogram updated under
C     PAGE_LOCK(HIST) / PAGE_UNLOCK(HIST) from inside the loop body; a
C     reduction in CRITICAL.  Directive spelling: lower-case sentinel
C     and keywords (csvm$ page_lock), SHARED without '::'.
C     Integer data (and integer-valued REAL*8): exact output.
      PROGRAM DYNAM
      IMPLICIT NONE
      INTEGER N, N2, NH
      PARAMETER (N = 2000, N2 = 300, NH = 16)
      INTEGER ROW(N), HIST(NH)
      REAL*8 W(N2, N2)
      INTEGER*8 TOT
CSVM$ SHARED ROW, HIST, W, TOT
      INTEGER I, J, K, S, NHIST
      INTEGER*8 PART, C1
      REAL*8 CW

CSVM$ EXCLUSIVE_REGION
      DO K = 1, NH
         HIST(K) = 0
      END DO
      TOT = 0
CSVM$ EXCLUSIVE_REGION_END

C     row I costs I inner iterations; chunks of 2 rows are handed out
C     to whichever processor asks next
      PART = 0
CSVM$ PDO (LOOPS(I), STRATEGY(DYNAMIC(2)))
      DO I = 1, N
         S = 0
         DO J = 1, I
            S = S + MOD(I * J, 13)
         END DO
         ROW(I) = S
         PART = PART + INT(S, 8) * MOD(I, 5)
         K = 1 + MOD(S, NH)
csvm$ page_lock(hist)
         HIST(K) = HIST(K) + 1
csvm$ page_unlock(hist)
      END DO
CSVM$ CRITICAL
      TOT = TOT + PART
CSVM$ CRITICAL_END

C     a tightly nested triangular pair: the lower triangle of W
CSVM$ PDO (LOOPS(I, J), STRATEGY(DYNAMIC(2)))
      DO 20 I = 1, N2
      DO 10 J = I, N2
         W(J, I) = DBLE(MOD(I * J + 3 * J, 29) - 14)
   10 CONTINUE
   20 CONTINUE

CSVM$ EXCLUSIVE_REGION
      C1 = 0
      DO I = 1, N
         C1 = C1 + INT(ROW(I), 8) * I
      END DO
      NHIST = 0
      DO K = 1, NH
         NHIST = NHIST + HIST(K)
      END DO
      CW = 0
      DO I = 1, N2
         DO J = I, N2
            CW = CW + W(J, I) * DBLE(I + 2 * J)
         END DO
      END DO
      WRITE(*,'(A,I20)') 'dynamic sum ROW(I)*I     = ', C1
      WRITE(*,'(A,I20)') 'dynamic reduction TOT    = ', TOT
      WRITE(*,'(A,I20)') 'dynamic histogram total  = ', NHIST
      WRITE(*,'(A,8I6)') 'dynamic HIST(1:8)  = ', (HIST(K), K = 1, 8)
      WRITE(*,'(A,8I6)') 'dynamic HIST(9:16) = ', (HIST(K), K = 9, 16)
      WRITE(*,'(A,ES24.16)') 'dynamic lower triangle W = ', CW
CSVM$ EXCLUSIVE_REGION_END
      END
