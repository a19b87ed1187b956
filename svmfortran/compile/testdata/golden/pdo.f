C     Parallel loops with each strategy.
      PROGRAM LOOPS
      INTEGER N, I, J
      PARAMETER (N = 64)
      REAL*8 A(N, N), X(N)
CSVM$ SHARED:: A, X
CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: T(N, N), R(N)
CSVM$ DISTRIBUTE (*, BLOCK) ONTO P:: T
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
      DO I = 1, N
         X(I) = I
      END DO
CSVM$ PDO (STRATEGY(CYCLIC(2)), LOOPS(J))
      DO 10 J = 1, N
         DO 10 I = 1, J
            A(I, J) = 0
   10 CONTINUE
CSVM$ PDO (LOOPS(J, I), STRATEGY(ON_HOME(T(I, J+1))))
      DO 20 J = 1, N - 1
      DO 20 I = 1, N
         A(I, J) = X(I) + J
   20 CONTINUE
CSVM$ PDO (LOOPS(I), STRATEGY(DYNAMIC(3)))
      DO I = 1, N
         X(I) = X(I) * 2
      END DO
CSVM$ PDO (LOOPS(I), STRATEGY(SEMI_DYNAMIC(R, 4)))
      OUTER: DO I = 1, N
         X(I) = X(I) + 1
      END DO OUTER
      END
