C     fig1_sections.f -- the paper's Figure 1: explicit distribution of
C     parallel sections onto processor arrangements.
C
C     Exercises: PROCESSORS whose extents use NUMPROC(); PSECTION /
C     SECTION ON P / SECTION ON P1 / PSECTION_END; CALLs of subroutines
C     of the same file inside the sections (nested data parallelism: F
C     and G run PDOs over their section's processors only); a TEMPLATE
C     sized by a dummy argument with ON_HOME scheduling; CYCLIC(4) and
C     DYNAMIC(64) loops; partial sums combined in a named and an unnamed
C     CRITICAL section; BARRIER over a section's processors; shared data
C     passed as arguments (F) and in a shared COMMON block (G); output
C     in EXCLUSIVE_REGIONs.  All data are integer valued: exact output.
      PROGRAM FIG1
      IMPLICIT NONE
      INTEGER N
      PARAMETER (N = 20000)
      REAL*8 A(N), SUMF
      REAL*8 B(N), SUMG
      COMMON /GDATA/ B, SUMG
CSVM$ SHARED:: A, SUMF, /GDATA/
CSVM$ PROCESSORS:: P(MAX(1, NUMPROC()/2)),
CSVM$+             P1(MAX(1, NUMPROC() - NUMPROC()/2))
      INTEGER I
      REAL*8 CA, CB

CSVM$ EXCLUSIVE_REGION
      SUMF = 0
      SUMG = 0
CSVM$ EXCLUSIVE_REGION_END

CSVM$ PSECTION
CSVM$ SECTION ON P
      CALL F(A, N, SUMF)
CSVM$ SECTION ON P1
      CALL G()
CSVM$ PSECTION_END

CSVM$ EXCLUSIVE_REGION
      CA = 0
      CB = 0
      DO I = 1, N
         CA = CA + A(I) * DBLE(MOD(I, 10) + 1)
         CB = CB + B(I) * DBLE(MOD(I, 9) + 1)
      END DO
      WRITE(*,'(A,ES24.16)') 'fig1 SUMF      = ', SUMF
      WRITE(*,'(A,ES24.16)') 'fig1 SUMG      = ', SUMG
      WRITE(*,'(A,ES24.16)') 'fig1 checksumA = ', CA
      WRITE(*,'(A,ES24.16)') 'fig1 checksumB = ', CB
      WRITE(*,'(A,3F10.1)') 'fig1 A(1),A(N/2),A(N) = ',
     &     A(1), A(N/2), A(N)
      WRITE(*,'(A,3F10.1)') 'fig1 B(1),B(N/2),B(N) = ',
     &     B(1), B(N/2), B(N)
CSVM$ EXCLUSIVE_REGION_END
      END

C     F: runs on the processors of arrangement P (first section).
      SUBROUTINE F(A, N, RES)
      IMPLICIT NONE
      INTEGER N
      REAL*8 A(N), RES
      INTEGER I
      REAL*8 PART
CSVM$ PROCESSORS:: PF(NUMPROC())
CSVM$ TEMPLATE:: TF(N)
CSVM$ DISTRIBUTE (BLOCK) ONTO PF:: TF

CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(TF(I))))
      DO I = 1, N
         A(I) = DBLE(MOD(I * 17, 101))
      END DO

C     partial sums per processor, combined in a named critical section
      PART = 0
CSVM$ PDO (LOOPS(I), STRATEGY(CYCLIC(4)))
      DO I = 1, N
         PART = PART + A(I) * DBLE(MOD(I, 7) + 1)
      END DO
CSVM$ CRITICAL SUMF
      RES = RES + PART
CSVM$ CRITICAL_END SUMF
C     after the barrier every processor of the section sees the full sum
CSVM$ BARRIER
CSVM$ PDO (LOOPS(I), STRATEGY(BLOCK))
      DO I = 1, N
         A(I) = A(I) + DBLE(MOD(NINT(RES), 13))
      END DO
      END

C     G: runs on the processors of arrangement P1 (second section).
      SUBROUTINE G()
      IMPLICIT NONE
      INTEGER N
      PARAMETER (N = 20000)
      REAL*8 B(N), SUMG
      COMMON /GDATA/ B, SUMG
CSVM$ SHARED:: /GDATA/
      INTEGER I, J
      REAL*8 PART, S

CSVM$ PDO (LOOPS(I), STRATEGY(DYNAMIC(64)))
      DO I = 1, N
C        uneven work: the inner loop length varies with I
         S = 0
         DO J = 1, MOD(I, 50)
            S = S + DBLE(MOD(I + J, 5))
         END DO
         B(I) = S
      END DO

      PART = 0
CSVM$ PDO (LOOPS(I))
      DO I = 2, N - 1
         PART = PART + B(I - 1) - B(I + 1) + 2 * B(I)
      END DO
CSVM$ CRITICAL
      SUMG = SUMG + PART
CSVM$ CRITICAL_END
      END
