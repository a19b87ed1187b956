C     blocks.f -- exclusive regions entered and left inside DO and IF
C     blocks, and parallel constructs inside the DO loops, IF and SELECT
C     CASE blocks of exclusive regions (the paper's recursive dispatch
C     code generation).
C
C     Replicated time steps, each with a parallel loop, print from an
C     exclusive region inside an IF inside the loop. An exclusive region
C     then runs a DO loop whose body holds a parallel loop and an IF
C     block with another; a DO WHILE that iterates until a shared value
C     converges; a SELECT CASE with a parallel loop in one case; a
C     labelled DO loop ending at a shared CONTINUE; CYCLE, EXIT and a GO
C     TO out of such loops. Every processor follows the master through
C     these blocks. Integer-valued REAL*8 data: exact output.
      PROGRAM BLOCKS
      IMPLICIT NONE
      INTEGER N, NT
      PARAMETER (N = 1000, NT = 12)
      REAL*8 X(N), Y(N), TOTAL
CSVM$ SHARED:: X, Y, TOTAL
      INTEGER I, J, IT, K, M, ITER
      REAL*8 STEP, LIMIT

CSVM$ PDO (LOOPS(I))
      DO I = 1, N
         X(I) = MOD(I, 17)
         Y(I) = 0
      END DO

C     Regions inside an IF inside a replicated loop.
      DO 100 IT = 1, NT
CSVM$ PDO (LOOPS(I), STRATEGY(CYCLIC(3)))
         DO I = 1, N
            Y(I) = Y(I) + X(I) * IT
         END DO
         IF (MOD(IT, 4) .EQ. 0) THEN
CSVM$ EXCLUSIVE_REGION
            WRITE (*, '(A,I3,F14.1)') 'blocks: step', IT, SUM(Y)
CSVM$ EXCLUSIVE_REGION_END
         ELSE IF (IT .EQ. NT - 1) THEN
CSVM$ EXCLUSIVE_REGION
            WRITE (*, '(A,I3)') 'blocks: almost done at', IT
CSVM$ EXCLUSIVE_REGION_END
         END IF
  100 CONTINUE

CSVM$ EXCLUSIVE_REGION
      STEP = 1
      DO K = 1, 5
         STEP = STEP * 2
CSVM$ PDO (LOOPS(I))
         DO I = 1, N
            X(I) = X(I) + STEP
         END DO
         IF (K .EQ. 2) CYCLE
         IF (MOD(K, 2) .EQ. 1) THEN
CSVM$ PDO (LOOPS(I), STRATEGY(DYNAMIC(64)))
            DO I = 1, N
               Y(I) = Y(I) - K
            END DO
         ELSE
            WRITE (*, '(A,I2)') 'blocks: even step', K
         END IF
         IF (K .EQ. 4) EXIT
      END DO
      WRITE (*, '(A,F14.1,F8.1)') 'blocks: after the DO', SUM(X), STEP

C     Until convergence: the condition is the master's, every time.
      LIMIT = 50
      ITER = 0
      TOTAL = 1000
      DO WHILE (TOTAL .GT. LIMIT)
         ITER = ITER + 1
CSVM$ PDO (LOOPS(I))
         DO I = 1, N
            X(I) = AINT(X(I) / 2)
         END DO
         TOTAL = 0
         DO I = 1, N
            TOTAL = TOTAL + X(I)
         END DO
      END DO
      WRITE (*, '(A,I3,F10.1)') 'blocks: converged', ITER, TOTAL

      DO M = 1, 3
         SELECT CASE (M)
         CASE (2)
CSVM$ PDO (LOOPS(I))
            DO I = 1, N
               X(I) = X(I) + M
            END DO
         CASE DEFAULT
            WRITE (*, '(A,I2)') 'blocks: case', M
         END SELECT
      END DO

C     A labelled nest ending at one CONTINUE, and a GO TO out of it.
      DO 200 J = 1, 4
         DO 200 K = 1, 2
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
            DO I = 1, N
               Y(I) = Y(I) + J * K
            END DO
            IF (J * K .EQ. 6) GO TO 210
  200 CONTINUE
  210 WRITE (*, '(A,2I3,F14.1)') 'blocks: left at', J, K, SUM(Y)
CSVM$ EXCLUSIVE_REGION_END
      END
