C     The paper's Figure 4, and what exclusive mode does around it: the
C     private values the master set reach the others at the dispatch of
C     the construct that reads them; a coordinated call of a subroutine
C     that runs in the mode of its call; parallel constructs inside a DO
C     loop and an IF block of the region, and a branch out of the loop; a
C     replicated region and a barrier; values the master set that code
C     after the region reads.
      PROGRAM DISPATCH
      INTEGER I, K, N
      REAL*8 A(100), S
CSVM$ SHARED:: A
CSVM$ EXCLUSIVE_REGION
      N = 100
      PRINT *, 'master only', N
      CALL SUB(A, N)
      DO K = 1, 3
         S = K * 0.5D0
CSVM$ PDO (LOOPS(I))
         DO I = 1, N
            A(I) = A(I) + S
         END DO
         IF (A(1) .GT. 100) GOTO 10
      END DO
   10 IF (N .GT. 10) THEN
CSVM$ REPLICATED_REGION
         CALL OTHER
CSVM$ REPLICATED_REGION_END
      END IF
CSVM$ BARRIER
      CALL EXTERN(I)
CSVM$ EXCLUSIVE_REGION_END
      K = N
      END

C     SUB runs in the mode of its call: called in exclusive mode, its
C     master runs it, and the others wait in its dispatcher until its PDO.
      SUBROUTINE SUB(X, M)
      INTEGER M, J
      REAL*8 X(M)
CSVM$ PDO (LOOPS(J))
      DO J = 1, M
         X(J) = J
      END DO
      WRITE (*, *) 'SUB', X(M)
      END

      SUBROUTINE OTHER
      END
