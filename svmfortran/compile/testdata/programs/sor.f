C     sor.f -- red-black successive over-relaxation on a shared grid of
C     M+2 rows of N REAL*8 values (the classic TreadMarks/SVM test).
C     Row I is stored contiguously as G(1:N, I), so a block of rows is a
C     block of pages.  Rows 0 and M+1 and columns 1 and N are fixed.
C
C     Exercises: a TEMPLATE of the interior rows distributed BLOCK;
C     two PDOs per iteration (red points, then black points) scheduled
C     ON_HOME(ROWS(I)) inside an ordinary DO loop executed by every
C     processor (replicated mode); a BLOCK PDO over rows 0..M+1 for the
C     initial values; a max-reduction of the residual in a CRITICAL
C     section (MAX does not depend on the order); master-only output;
C     the '!SVM$' sentinel in fixed form (the BARRIER).
C
C     Each grid point is updated by one processor with the same
C     expression as in the sequential program and the sums are taken by
C     the master in a fixed order, so the output is bit-for-bit the same
C     for any number of processors: no tolerance.
      PROGRAM SOR
      IMPLICIT NONE
      INTEGER M, N, ITERS
      PARAMETER (M = 200, N = 300, ITERS = 50)
      REAL*8 OMEGA
      PARAMETER (OMEGA = 1.5D0)
      REAL*8 G(N, 0:M+1), RMAX
CSVM$ SHARED:: G, RMAX
      INTEGER I, J, IT
      REAL*8 S, R, PART
CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: ROWS(M)
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: ROWS

C     initial and boundary values
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
      DO I = 0, M + 1
         DO J = 1, N
            IF (I .EQ. 0) THEN
               G(J, I) = DBLE(MOD(J, 10))
            ELSE IF (I .EQ. M + 1) THEN
               G(J, I) = 5.0D0
            ELSE IF (J .EQ. 1) THEN
               G(J, I) = DBLE(I) / DBLE(M)
            ELSE IF (J .EQ. N) THEN
               G(J, I) = -1.0D0
            ELSE
               G(J, I) = 0.0D0
            END IF
         END DO
      END DO

      DO IT = 1, ITERS
C        red points: I+J even
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(ROWS(I))))
         DO I = 1, M
            DO J = 2 + MOD(I, 2), N - 1, 2
               G(J, I) = (1.0D0 - OMEGA) * G(J, I) + OMEGA * 0.25D0 *
     &              (G(J - 1, I) + G(J + 1, I) + G(J, I - 1)
     &               + G(J, I + 1))
            END DO
         END DO
C        black points: I+J odd
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(ROWS(I))))
         DO I = 1, M
            DO J = 3 - MOD(I, 2), N - 1, 2
               G(J, I) = (1.0D0 - OMEGA) * G(J, I) + OMEGA * 0.25D0 *
     &              (G(J - 1, I) + G(J + 1, I) + G(J, I - 1)
     &               + G(J, I + 1))
            END DO
         END DO
      END DO

C     maximum residual, combined with MAX in a critical section
CSVM$ EXCLUSIVE_REGION
      RMAX = 0
CSVM$ EXCLUSIVE_REGION_END
      PART = 0
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(ROWS(I))))
      DO I = 1, M
         DO J = 2, N - 1
            R = ABS(G(J - 1, I) + G(J + 1, I) + G(J, I - 1)
     &              + G(J, I + 1) - 4.0D0 * G(J, I))
            PART = MAX(PART, R)
         END DO
      END DO
CSVM$ CRITICAL
      RMAX = MAX(RMAX, PART)
CSVM$ CRITICAL_END
!SVM$ BARRIER

CSVM$ EXCLUSIVE_REGION
      S = 0
      DO I = 0, M + 1
         DO J = 1, N
            S = S + G(J, I)
         END DO
      END DO
      WRITE(*,'(A,I4,A,I4,A,I4)') 'sor M = ', M, '  N = ', N,
     &     '  iterations = ', ITERS
      WRITE(*,'(A,ES24.16)') 'sor sum of grid     = ', S
      WRITE(*,'(A,ES24.16)') 'sor G(2,1)          = ', G(2, 1)
      WRITE(*,'(A,ES24.16)') 'sor G(N/2,5)        = ', G(N/2, 5)
      WRITE(*,'(A,ES24.16)') 'sor G(N-1,M)        = ', G(N - 1, M)
      WRITE(*,'(A,ES24.16)') 'sor G(17,123)       = ', G(17, 123)
      WRITE(*,'(A,ES24.16)') 'sor max residual    = ', RMAX
CSVM$ EXCLUSIVE_REGION_END
      END
