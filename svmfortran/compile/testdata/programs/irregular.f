C     irregular.f -- an irregular-grid edge loop (the application area
C     of the paper's indirect and linked distributions, section 3):
C     nodes carry values, a pseudo-random edge list couples them; in
C     each step every edge sends a flux from one node to the other, then
C     every node takes up what it received.
C
C     Exercises: an indirect distribution whose map is computed inside
C     the directive, DISTRIBUTE (I) ONTO P(1+MOD(I*7, NUMPROC())) (the
C     only place NUMPROC() may appear); a linked distribution of the
C     edges to the home of their first node, in the executable part,
C     after the private edge list has been generated (LCG in integer
C     arithmetic, replicated code); ON_HOME loops over edges and nodes
C     inside a time loop; scattered updates of shared node arrays
C     protected by a named CRITICAL section (ACC) and by PAGE_LOCK /
C     PAGE_UNLOCK (DEG); a reduction in CRITICAL; the '*SVM$' sentinel.
C     Integer data: exact output.
      PROGRAM IRREG
      IMPLICIT NONE
      INTEGER NN, NE, NSTEP
      PARAMETER (NN = 400, NE = 1600, NSTEP = 4)
      INTEGER VAL(NN), ACC(NN), DEG(NN)
      INTEGER*8 TOTAL
CSVM$ SHARED:: VAL, ACC, DEG, TOTAL
      INTEGER EDGE1(NE), EDGE2(NE)
      INTEGER I, K, N1, N2, FLUX, ISTEP, DMIN, DMAX
      INTEGER*8 SEED, PART, C1, C2
CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: NODES(NN), EDGES(NE)
CSVM$ DISTRIBUTE (I) ONTO P(1 + MOD(I * 7, NUMPROC())):: NODES

C     the edge list: Park-Miller minimal standard generator, every
C     processor computes the same private copy
      SEED = 20250101
      DO K = 1, NE
         SEED = MOD(SEED * 16807, 2147483647)
         EDGE1(K) = 1 + INT(MOD(SEED, INT(NN, 8)))
         SEED = MOD(SEED * 16807, 2147483647)
         EDGE2(K) = 1 + INT(MOD(SEED, INT(NN, 8)))
         IF (EDGE2(K) .EQ. EDGE1(K)) EDGE2(K) = 1 + MOD(EDGE1(K), NN)
      END DO

C     an edge is worked on where its first node lives
CSVM$ DISTRIBUTE (K) ONTO HOME(NODES(EDGE1(K))):: EDGES

CSVM$ EXCLUSIVE_REGION
      TOTAL = 0
CSVM$ EXCLUSIVE_REGION_END

CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(NODES(I))))
      DO I = 1, NN
         VAL(I) = MOD(I * 31, 200)
         ACC(I) = 0
         DEG(I) = 0
      END DO

      DO ISTEP = 1, NSTEP
CSVM$ PDO (LOOPS(K), STRATEGY(ON_HOME(EDGES(K))))
         DO K = 1, NE
            N1 = EDGE1(K)
            N2 = EDGE2(K)
            FLUX = (VAL(N1) - VAL(N2)) * (1 + MOD(K, 3))
CSVM$ CRITICAL EDGEFLUX
            ACC(N1) = ACC(N1) - FLUX
            ACC(N2) = ACC(N2) + FLUX
CSVM$ CRITICAL_END EDGEFLUX
CSVM$ PAGE_LOCK(DEG)
            DEG(N1) = DEG(N1) + 1
            DEG(N2) = DEG(N2) + 1
CSVM$ PAGE_UNLOCK(DEG)
         END DO

CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(NODES(I))))
         DO I = 1, NN
            VAL(I) = MODULO(VAL(I) + ACC(I) / 8, 997)
            ACC(I) = 0
         END DO
      END DO

      PART = 0
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(NODES(I))))
      DO I = 1, NN
         PART = PART + INT(VAL(I), 8) * INT(DEG(I), 8)
      END DO
CSVM$ CRITICAL
      TOTAL = TOTAL + PART
CSVM$ CRITICAL_END
*SVM$ BARRIER

CSVM$ EXCLUSIVE_REGION
      C1 = 0
      C2 = 0
      DMIN = DEG(1)
      DMAX = DEG(1)
      DO I = 1, NN
         C1 = C1 + INT(VAL(I), 8) * I
         C2 = C2 + DEG(I)
         DMIN = MIN(DMIN, DEG(I))
         DMAX = MAX(DMAX, DEG(I))
      END DO
      WRITE(*,'(A,I20)') 'irregular sum VAL(I)*I      = ', C1
      WRITE(*,'(A,I20)') 'irregular sum DEG (2*NE*NS) = ', C2
      WRITE(*,'(A,2I8)') 'irregular min, max DEG      = ', DMIN, DMAX
      WRITE(*,'(A,I20)') 'irregular sum VAL*DEG       = ', TOTAL
      WRITE(*,'(A,3I8)') 'irregular VAL(1),VAL(NN/2),VAL(NN) = ',
     &     VAL(1), VAL(NN/2), VAL(NN)
CSVM$ EXCLUSIVE_REGION_END
      END
