C     calls.f -- subprograms inherit the execution mode of their call
C     (the paper's section 4 and Figure 4).
C
C     From an exclusive region the master calls STEP, which prints a
C     line, calls SMOOTH (a parallel loop) and REPORT (which prints),
C     and returns early on its last step: called in exclusive mode,
C     STEP's master runs it while the others wait in its dispatcher, and
C     they join SMOOTH's loop only. REPORT has no parallel construct: the
C     master alone calls it. NORM and CHECK are called in replicated
C     mode and in exclusive mode: their exclusive regions (CHECK's inside
C     an IF block, with a RETURN) do nothing new in exclusive mode. Every
C     line is printed once, by one processor, in the sequential
C     program's order; no warning is raised. Integer-valued REAL*8 data:
C     exact output.
      PROGRAM CALLS
      IMPLICIT NONE
      INTEGER N
      PARAMETER (N = 3000)
      REAL*8 A(N), B(N), R
CSVM$ SHARED:: A, B
      INTEGER I, K, NSTEPS

CSVM$ PDO (LOOPS(I))
      DO I = 1, N
         A(I) = MOD(I * 7, 31)
         B(I) = 0
      END DO
      CALL NORM(A, N, R)
      DO K = 1, 3
         CALL CHECK(A, N, K)
      END DO

CSVM$ EXCLUSIVE_REGION
      NSTEPS = 4
      WRITE (*, '(A,F12.1)') 'calls: norm before =', R
      DO K = 1, NSTEPS
         CALL STEP(A, B, N, K, NSTEPS)
      END DO
      CALL NORM(A, N, R)
      WRITE (*, '(A,F12.1)') 'calls: norm after =', R
CSVM$ EXCLUSIVE_REGION_END
      END

C     One step: a WRITE, a call with a parallel loop, a call that writes.
      SUBROUTINE STEP(A, B, N, K, NSTEPS)
      IMPLICIT NONE
      INTEGER N, K, NSTEPS
      REAL*8 A(N), B(N)
      WRITE (*, '(A,I2)') 'calls: step', K
      CALL CHECK(A, N, K)
      CALL SMOOTH(A, B, N, K)
      IF (K .EQ. NSTEPS) RETURN
      CALL REPORT(A, N, K)
      END

C     A parallel loop over B, then one over A.
      SUBROUTINE SMOOTH(A, B, N, K)
      IMPLICIT NONE
      INTEGER N, K, I
      REAL*8 A(N), B(N)
CSVM$ PDO (LOOPS(I))
      DO I = 2, N - 1
         B(I) = A(I - 1) + A(I + 1) + K
      END DO
CSVM$ PDO (LOOPS(I), STRATEGY(CYCLIC(5)))
      DO I = 2, N - 1
         A(I) = MOD(B(I), 101.0D0)
      END DO
      END

C     No parallel construct: in exclusive mode the master alone runs it.
      SUBROUTINE REPORT(A, N, K)
      IMPLICIT NONE
      INTEGER N, K
      REAL*8 A(N)
      WRITE (*, '(A,I2,3F8.1)') 'calls: report', K, A(2), A(N / 2),
     &     A(N - 1)
      END

C     The sum of A: called in replicated mode its region runs on the
C     master and the others take R at its end; called in exclusive mode
C     the region changes nothing.
      SUBROUTINE NORM(A, N, R)
      IMPLICIT NONE
      INTEGER N, I
      REAL*8 A(N), R, S
CSVM$ SHARED:: S
      S = 0
CSVM$ BARRIER
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
      DO I = 1, N
CSVM$ CRITICAL NORMSUM
         S = S + A(I) * I
CSVM$ CRITICAL_END NORMSUM
      END DO
CSVM$ EXCLUSIVE_REGION
      R = S
CSVM$ EXCLUSIVE_REGION_END
      END

C     Prints from a region inside an IF block, and returns from it early.
      SUBROUTINE CHECK(A, N, K)
      IMPLICIT NONE
      INTEGER N, K
      REAL*8 A(N)
      IF (K .GT. 1) THEN
CSVM$ EXCLUSIVE_REGION
         WRITE (*, '(A,I2,F8.1)') 'calls: check', K, A(K)
         IF (K .EQ. 3) RETURN
         WRITE (*, '(A)') 'calls: checked'
CSVM$ EXCLUSIVE_REGION_END
      END IF
      END
