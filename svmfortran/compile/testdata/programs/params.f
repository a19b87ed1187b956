C     params.f -- parameters and loop bounds set in sequential code
C     before parallel loops, as a Fortran programmer writes them.
C
C     The master sets, in an exclusive region, a scale factor, a loop
C     bound, a private table of coefficients and a private COMMON
C     block; the parallel loops in the region read them (the issue's
C     first example: SCALE), and a subroutine it calls reads the COMMON
C     block in its own parallel loop. It also calls TUNING, which sets
C     another COMMON block that GAIN, called in a parallel loop, reads.
C     After the region, replicated code uses what the master set: the
C     bound of a parallel loop, a sum, GAIN's COMMON block. Replicated
C     code sets other values the same on every processor.
C     Integer-valued REAL*8 data: exact output.
      PROGRAM PARAMS
      IMPLICIT NONE
      INTEGER NMAX
      PARAMETER (NMAX = 2000)
      REAL*8 W(NMAX), V(NMAX), SUMW
CSVM$ SHARED:: W, V, SUMW
      INTEGER NX, NY, K, I, J
      REAL*8 SCALE, COEF(5), OFFSET, PART
      INTEGER NSTEP
      REAL*8 SHIFT
      COMMON /SETUP/ SHIFT, NSTEP
      INTEGER NGAIN
      COMMON /TUNE/ NGAIN
      REAL*8 GAIN

C     Replicated: every processor computes the same NY.
      NY = NMAX / 4
CSVM$ PDO (LOOPS(K))
      DO 10 K = 1, NMAX
         W(K) = MOD(K, 13)
         V(K) = 0
   10 CONTINUE

CSVM$ EXCLUSIVE_REGION
      SCALE = 2.5D0
      NX = NMAX - 7
      DO I = 1, 5
         COEF(I) = I * 2
      END DO
      NSTEP = 3
      SHIFT = 4
      WRITE (*, '(A,I6,F6.1)') 'params: NX, SCALE =', NX, SCALE
CSVM$ PDO (LOOPS(K), STRATEGY(BLOCK))
      DO 20 K = 1, NX
         W(K) = W(K) * SCALE + COEF(MOD(K, 5) + 1)
   20 CONTINUE
      OFFSET = NX / 10
CSVM$ PDO (LOOPS(K), STRATEGY(CYCLIC(7)))
      DO 30 K = NY, NX
         V(K) = W(K) - OFFSET
   30 CONTINUE
      CALL SHIFTED(V, NMAX)
      CALL TUNING(5)
CSVM$ PDO (LOOPS(K), STRATEGY(CYCLIC))
      DO K = 1, NMAX
         V(K) = V(K) + GAIN(K)
      END DO
      SUMW = 0
      DO K = 1, NMAX
         SUMW = SUMW + W(K) + V(K)
      END DO
      WRITE (*, '(A,F16.1)') 'params: sum in the region =', SUMW
CSVM$ EXCLUSIVE_REGION_END

C     Replicated again: NX, OFFSET and COEF are the master's everywhere.
      SUMW = 0
CSVM$ BARRIER
CSVM$ PDO (LOOPS(J), STRATEGY(DYNAMIC(50)))
      DO J = 1, NX
         PART = W(J) + OFFSET + COEF(5) + GAIN(J)
CSVM$ CRITICAL
         SUMW = SUMW + PART
CSVM$ CRITICAL_END
      END DO
CSVM$ BARRIER
CSVM$ EXCLUSIVE_REGION
      WRITE (*, '(A,F16.1)') 'params: sum after the region =', SUMW
      WRITE (*, '(A,I6,F8.1)') 'params: NX, OFFSET =', NX, OFFSET
CSVM$ EXCLUSIVE_REGION_END
      END

C     SHIFTED reads the private COMMON block /SETUP/ in a parallel loop:
C     called from the exclusive region, the master's values reach the
C     others when it dispatches them to the loop.
      SUBROUTINE SHIFTED(V, N)
      IMPLICIT NONE
      INTEGER N, K, S
      REAL*8 V(N)
      INTEGER NSTEP
      REAL*8 SHIFT
      COMMON /SETUP/ SHIFT, NSTEP
      DO S = 1, NSTEP
CSVM$ PDO (LOOPS(K))
         DO K = 1, N
            V(K) = V(K) + SHIFT
         END DO
      END DO
      END

C     TUNING and GAIN: a private COMMON block set by one subroutine and read
C     by a function, neither of which has a directive.
      SUBROUTINE TUNING(N)
      IMPLICIT NONE
      INTEGER N
      INTEGER NGAIN
      COMMON /TUNE/ NGAIN
      NGAIN = N
      END

      REAL*8 FUNCTION GAIN(K)
      IMPLICIT NONE
      INTEGER K
      INTEGER NGAIN
      COMMON /TUNE/ NGAIN
      GAIN = MOD(K, NGAIN)
      END
