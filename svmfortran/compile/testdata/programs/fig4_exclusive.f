C     fig4_exclusive.f -- the source of the paper's Figure 4: exclusive
C     mode and dispatch.  Inside an EXCLUSIVE_REGION the master sets
C     shared data, makes a coordinated CALL SUB (the waiting processors
C     join it; SUB runs a PDO over the shared array), then reads the
C     array and prints.
C
C     Exercises, all at the top level of the exclusive region: a
C     coordinated call (SUB inherits exclusive mode: the others join
C     its PDO), a REDISTRIBUTE, a PDO
C     with ON_HOME, and a REPLICATED_REGION in which every processor
C     runs a PDO, adds its partial sum in a CRITICAL section and meets
C     the others at a BARRIER.  Ordinary DO loops and IFs of the master
C     (initialisation, output) contain no parallel constructs.
C     Integer-valued REAL*8 data: exact output.
      PROGRAM DISPATCH
      IMPLICIT NONE
      INTEGER N
      PARAMETER (N = 5000)
      REAL*8 A(N), ALPHA, TOTAL
CSVM$ SHARED:: A, ALPHA, TOTAL
      INTEGER I, K
      REAL*8 PART, S
CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: T(N)
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: T

CSVM$ EXCLUSIVE_REGION
C     the master alone: private K and shared ALPHA, A
      K = 1
      ALPHA = 3
      DO I = 1, N
         A(I) = DBLE(MOD(I, 11))
      END DO
C     coordinated call: every processor executes SUB
      CALL SUB(A, N, ALPHA)
      K = 2
C     the master reads what all processors wrote in SUB
      S = 0
      DO I = 1, N
         S = S + A(I) * DBLE(I)
      END DO
      WRITE(*,'(A,I3)') 'fig4 K = ', K
      WRITE(*,'(A,ES24.16)') 'fig4 after SUB: sum A(I)*I = ', S
      WRITE(*,'(A,3F10.1)') 'fig4 A(1),A(2500),A(5000) = ',
     &     A(1), A(2500), A(N)

C     a template operation and a parallel loop in exclusive mode
CSVM$ REDISTRIBUTE (CYCLIC(5)) ONTO P:: T
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(T(I))))
      DO I = 1, N
         A(I) = A(I) - DBLE(MOD(I, 4))
      END DO

      TOTAL = 0
CSVM$ REPLICATED_REGION
C     every processor again: a reduction needs all of them
      PART = 0
CSVM$ PDO (LOOPS(I), STRATEGY(CYCLIC))
      DO I = 1, N
         PART = PART + A(I)
      END DO
CSVM$ CRITICAL
      TOTAL = TOTAL + PART
CSVM$ CRITICAL_END
CSVM$ BARRIER
CSVM$ REPLICATED_REGION_END
      WRITE(*,'(A,ES24.16)') 'fig4 replicated region: sum A = ',
     &     TOTAL
      IF (TOTAL .GT. 0) THEN
         WRITE(*,'(A)') 'fig4 master continues after the region'
      END IF
CSVM$ EXCLUSIVE_REGION_END
      END

C     SUB: a subprogram of the same file with a parallel loop, so the
C     call above is coordinated: called in exclusive mode, its master
C     runs it and the others join its PDO.  The master's writes before
C     the call must be visible here.
      SUBROUTINE SUB(A, N, ALPHA)
      IMPLICIT NONE
      INTEGER N
      REAL*8 A(N), ALPHA
      INTEGER I
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
      DO I = 1, N
         A(I) = A(I) * ALPHA + DBLE(MOD(I, 3))
      END DO
      END
