C     Blocks and exclusive mode: a region in a labelled DO loop of
C     replicated code (the loop becomes a block DO, for the dispatcher),
C     a STOP in it; the master's DO WHILE, SELECT CASE and DO loops that
C     hold parallel loops, with CYCLE and EXIT: the others follow it in.
      PROGRAM BLOCKS
      INTEGER N, I, K
      PARAMETER (N = 8)
      REAL*8 X(N), TOL
CSVM$ SHARED:: X
      DO 10 K = 1, 3
CSVM$ EXCLUSIVE_REGION
         PRINT *, K
         IF (K .EQ. 3) STOP
CSVM$ EXCLUSIVE_REGION_END
   10 CONTINUE
CSVM$ EXCLUSIVE_REGION
      TOL = 0.5
      DO WHILE (X(1) .GT. TOL)
CSVM$ PDO (LOOPS(I))
         DO I = 1, N
            X(I) = X(I) / 2
         END DO
      END DO
      SELECT CASE (N)
      CASE (8)
CSVM$ BARRIER
      END SELECT
      OUTER: DO K = 1, 4
         IF (K .EQ. 2) CYCLE OUTER
CSVM$ PDO (LOOPS(I))
         DO I = 1, N
            X(I) = K
         END DO
         IF (X(N) .GT. 2) EXIT
      END DO OUTER
CSVM$ EXCLUSIVE_REGION_END
      END
