C     mixed.f -- exclusive mode mixed with the other constructs.
C
C     In an exclusive region: a GO TO loop whose body has a parallel loop
C     and, in a logical IF, a coordinated call of a subroutine with a
C     parallel loop; a DO loop whose body holds a replicated region with
C     a parallel loop, a critical section and a barrier. Then sections
C     with an exclusive region in each (the section's master runs it); a
C     parallel loop that calls a subroutine with a named critical section
C     (each processor calls it in a processor set of its own); and a
C     subroutine called in exclusive mode that stops the program.
C     Integer-valued REAL*8 data: exact output.
      PROGRAM MIXED
      IMPLICIT NONE
      INTEGER N
      PARAMETER (N = 600)
      REAL*8 A(N), T
CSVM$ SHARED:: A, T
      INTEGER I, K, IT
      REAL*8 R
CSVM$ PDO (LOOPS(I))
      DO I = 1, N
         A(I) = MOD(I, 7)
      END DO
C     A GOTO loop in a region with a PDO and a coordinated call in a
C     logical IF; a replicated region inside a dispatching DO.
CSVM$ EXCLUSIVE_REGION
      IT = 0
   10 IT = IT + 1
CSVM$ PDO (LOOPS(I))
      DO I = 1, N
         A(I) = A(I) + IT
      END DO
      IF (IT .EQ. 2) CALL BUMP(A, N, IT)
      IF (IT .LT. 3) GOTO 10
      DO K = 1, 2
         T = 0
CSVM$ REPLICATED_REGION
         R = 0
CSVM$ PDO (LOOPS(I), STRATEGY(CYCLIC))
         DO I = 1, N
            R = R + A(I) * K
         END DO
CSVM$ CRITICAL
         T = T + R
CSVM$ CRITICAL_END
CSVM$ BARRIER
CSVM$ REPLICATED_REGION_END
         WRITE (*, '(A,I2,F12.1)') 'mixed: total', K, T
      END DO
CSVM$ EXCLUSIVE_REGION_END
C     Sections with a region in each; a call in a parallel loop of a
C     subroutine that has a critical section.
CSVM$ PSECTION
CSVM$ SECTION
CSVM$ EXCLUSIVE_REGION
CSVM$ PDO (LOOPS(I))
      DO I = 1, N / 2
         A(I) = A(I) * 2
      END DO
CSVM$ EXCLUSIVE_REGION_END
CSVM$ SECTION
CSVM$ EXCLUSIVE_REGION
CSVM$ PDO (LOOPS(I))
      DO I = N / 2 + 1, N
         A(I) = A(I) * 3
      END DO
CSVM$ EXCLUSIVE_REGION_END
CSVM$ PSECTION_END
      T = 0
CSVM$ BARRIER
CSVM$ PDO (LOOPS(I), STRATEGY(DYNAMIC(37)))
      DO I = 1, N
         CALL ADD(T, A(I))
      END DO
CSVM$ EXCLUSIVE_REGION
      WRITE (*, '(A,F12.1)') 'mixed: sum', T
      CALL FINISH(T)
CSVM$ EXCLUSIVE_REGION_END
      END

      SUBROUTINE BUMP(A, N, IT)
      INTEGER N, IT, I
      REAL*8 A(N)
CSVM$ PDO (LOOPS(I))
      DO I = 1, N
         A(I) = A(I) + 10 * IT
      END DO
      END

      SUBROUTINE ADD(T, X)
      REAL*8 T, X
CSVM$ CRITICAL ADDING
      T = T + X
CSVM$ CRITICAL_END ADDING
      END

      SUBROUTINE FINISH(T)
      REAL*8 T
CSVM$ BARRIER
      IF (T .GT. 0) THEN
         WRITE (*, '(A)') 'mixed: stop'
         STOP
      END IF
      WRITE (*, '(A)') 'mixed: not here'
      END
