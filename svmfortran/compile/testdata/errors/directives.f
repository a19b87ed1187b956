C     Misused directives, each with the diagnostic it must produce.
      PROGRAM BAD
      INTEGER N, I, J, K
      PARAMETER (N = 10)
      REAL A(N), B(N), D
      INTEGER Q
      DATA D /1.0/
CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: T(N), T2(N, N), U(N)
CSVM$ SHARED:: A, D                        ! ERROR "initialised by DATA"
CSVM$ SHARED:: C                           ! ERROR "C is not declared in this unit"
CSVM$ SHARED:: /NOPE/                      ! ERROR "no COMMON statement of this unit declares"
CSVM$ DISTRIBUTE (BLOCK) ONTO X:: T        ! ERROR "processor arrangement X is not declared"
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: Z        ! ERROR "template Z is not declared"
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: T2       ! ERROR "needs 2 distribution formats, not 1"
CSVM$ DISTRIBUTE (BLOCK, BLOCK) ONTO P:: T2 ! ERROR "mismatched ranks"
CSVM$ DISTRIBUTE (BLOCK) ONTO T:: U        ! ERROR "T is a template, not a processor arrangement"
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(U(I)))) ! ERROR "ON_HOME on template U, which is not distributed"
      DO I = 1, N
         A(I) = I
      END DO
CSVM$ PDO (LOOPS(I))                       ! ERROR "must be followed by DO I"
      A(1) = 0
CSVM$ PDO (LOOPS(J))
      DO I = 1, N                          ! ERROR "PDO LOOPS names J here, but this DO's index is I"
         A(I) = 0
      END DO
CSVM$ PDO (LOOPS(I))
      DO I = 1, N, 2                       ! ERROR "step 2"
         A(I) = 0
      END DO
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: T
CSVM$ PDO (LOOPS(I), STRATEGY(ON_HOME(T(2*I)))) ! ERROR "write a LOOPS index plus or minus a constant"
      DO I = 1, N
         A(I) = 0
      END DO
CSVM$ PDO (LOOPS(I, J), STRATEGY(ON_HOME(T2(I, J))))
      DO I = 1, N
      DO J = 1, I                          ! ERROR "the bounds of parallel loop J depend on I"
         A(I) = 0
      END DO
      END DO
CSVM$ PDO (LOOPS(I))
      DO I = 1, N
CSVM$ BARRIER                              ! ERROR "BARRIER inside a parallel loop"
      END DO
CSVM$ TEMPLATE:: LATE(N)                   ! ERROR "TEMPLATE belongs in the specification part"
      PRINT *, 'everyone'                  ! WARNING "I/O in replicated mode"
CSVM$ EXCLUSIVE_REGION
CSVM$ EXCLUSIVE_REGION                     ! ERROR "EXCLUSIVE_REGION inside an exclusive region"
CSVM$ EXCLUSIVE_REGION_END
CSVM$ EXCLUSIVE_REGION_END
CSVM$ CRITICAL ONE
CSVM$ CRITICAL_END TWO                     ! ERROR "CRITICAL_END TWO ends critical section ONE"
CSVM$ SECTION                              ! ERROR "SECTION outside a PSECTION construct"
CSVM$ PAGE_LOCK(B)                         ! ERROR "B is not one"
CSVM$ PSECTION_END                         ! ERROR "PSECTION_END without an open PSECTION"
      END
