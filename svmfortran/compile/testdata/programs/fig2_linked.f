C     fig2_linked.f -- the paper's Figure 2: linked distribution for an
C     irregular grid.  The work on the 1000 boundary nodes is given to
C     the processors that own the corresponding grid nodes, through
C     DISTRIBUTE (I) ONTO HOME(NODES(INDIRECT(I))).
C
C     Exercises: TEMPLATE and DISTRIBUTE (BLOCK) in the specification
C     part; a linked DISTRIBUTE in the executable part (written exactly
C     as in the figure: continuation line, ':' for '::'), after the
C     private map INDIRECT has been computed in replicated code;
C     ON_HOME loops over both templates, with an offset range (2..NN-1);
C     REDISTRIBUTE (CYCLIC(100)) of NODES, which must not move
C     BOUNDARY_NODES (no permanent link); partial sums in CRITICAL.
C     Integer data: exact output.
      PROGRAM FIG2
      IMPLICIT NONE
      INTEGER NN, NB
      PARAMETER (NN = 17000, NB = 1000)
      INTEGER X(NN), Y(NN), XB(NB)
      INTEGER*8 TOTAL
CSVM$ SHARED:: X, Y, XB, TOTAL
      INTEGER INDIRECT(NB)
      INTEGER I, K
      INTEGER*8 PART, C1, C2, C3

CSVM$ PROCESSORS:: P(NUMPROC())

CSVM$ TEMPLATE:: NODES(17000)
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: NODES
CSVM$ TEMPLATE:: BOUNDARY_NODES(1000)

C     boundary node K is grid node INDIRECT(K); 7919 is prime and does
C     not divide 17000, so the map is one to one (replicated code: every
C     processor computes the same private copy)
      DO K = 1, NB
         INDIRECT(K) = 1 + MOD(K * 7919, NN)
      END DO

CSVM$ DISTRIBUTE (I) ONTO
CSVM$+ HOME(NODES(INDIRECT(I))): BOUNDARY_NODES

CSVM$ EXCLUSIVE_REGION
      TOTAL = 0
CSVM$ EXCLUSIVE_REGION_END

CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(NODES(I))))
      DO I = 1, NN
         X(I) = MOD(I * 37, 1000)
         Y(I) = 0
      END DO

C     boundary work, done where the grid node lives
CSVM$ PDO (LOOPS(K), STRATEGY(ON_HOME(BOUNDARY_NODES(K))))
      DO K = 1, NB
         XB(K) = X(INDIRECT(K)) + K
         Y(INDIRECT(K)) = 2 * XB(K)
      END DO

C     interior nodes: a 3-point stencil on X added to Y
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(NODES(I))))
      DO I = 2, NN - 1
         Y(I) = Y(I) + X(I - 1) - X(I + 1) + MOD(I, 3)
      END DO

C     redistributing NODES leaves BOUNDARY_NODES as it was
CSVM$ REDISTRIBUTE (CYCLIC(100)) ONTO P:: NODES

CSVM$ PDO (LOOPS(K), STRATEGY(ON_HOME(BOUNDARY_NODES(K))))
      DO K = 1, NB
         XB(K) = XB(K) * 3 + Y(INDIRECT(K))
      END DO

      PART = 0
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(NODES(I))))
      DO I = 1, NN
         PART = PART + INT(Y(I), 8) * INT(MOD(I, 17) + 1, 8)
      END DO
CSVM$ CRITICAL
      TOTAL = TOTAL + PART
CSVM$ CRITICAL_END
CSVM$ BARRIER

CSVM$ EXCLUSIVE_REGION
      C1 = 0
      C2 = 0
      C3 = 0
      DO I = 1, NN
         C1 = C1 + INT(X(I), 8) * I
         C2 = C2 + INT(Y(I), 8) * I
      END DO
      DO K = 1, NB
         C3 = C3 + INT(XB(K), 8) * K
      END DO
      WRITE(*,'(A,I20)') 'fig2 sum X(I)*I      = ', C1
      WRITE(*,'(A,I20)') 'fig2 sum Y(I)*I      = ', C2
      WRITE(*,'(A,I20)') 'fig2 sum XB(K)*K     = ', C3
      WRITE(*,'(A,I20)') 'fig2 parallel total  = ', TOTAL
      WRITE(*,'(A,3I8)') 'fig2 XB(1),XB(333),XB(1000) = ',
     &     XB(1), XB(333), XB(NB)
CSVM$ EXCLUSIVE_REGION_END
      END
