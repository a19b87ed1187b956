C     Constructs inside others, and branches across them, each with the
C     diagnostic it must produce.
      PROGRAM CONS
      INTEGER N, I, K
      PARAMETER (N = 10)
      REAL A(N)
CSVM$ SHARED:: A
CSVM$ PROCESSORS:: P(NUMPROC())
CSVM$ TEMPLATE:: T(N)
CSVM$ PDO (LOOPS(I))
      DO I = 1, N
CSVM$ EXCLUSIVE_REGION                     ! ERROR "EXCLUSIVE_REGION inside a parallel loop"
CSVM$ EXCLUSIVE_REGION_END
CSVM$ REPLICATED_REGION                    ! ERROR "REPLICATED_REGION inside a parallel loop"
CSVM$ REPLICATED_REGION_END
CSVM$ PSECTION                             ! ERROR "PSECTION inside a parallel loop"
CSVM$ SECTION
CSVM$ PSECTION_END
CSVM$ DISTRIBUTE (BLOCK) ONTO P:: T        ! ERROR "DISTRIBUTE inside a parallel loop"
         IF (A(I) .LT. 0) RETURN           ! ERROR "RETURN inside a parallel loop"
      END DO
CSVM$ PSECTION
CSVM$ SECTION
      IF (N .EQ. 0) RETURN                 ! ERROR "RETURN inside the PSECTION at line 22: end it first"
CSVM$ PSECTION_END
C     Branches into and out of constructs.
      GO TO 20                             ! ERROR "the branch to 20 enters the EXCLUSIVE_REGION at line 28"
CSVM$ EXCLUSIVE_REGION
   20 A(1) = 1
CSVM$ EXCLUSIVE_REGION_END
      DO K = 1, 2
CSVM$ CRITICAL
         IF (K .EQ. 2) EXIT                ! ERROR "EXIT of the DO loop at line 31 leaves the CRITICAL at line 32"
CSVM$ CRITICAL_END
      END DO
C     Blocks and their ends out of place.
      ELSE                                 ! ERROR "ELSE without an open IF (...) THEN block"
      IF (N .GT. 0) THEN
CSVM$ CRITICAL
      END IF                               ! ERROR "END IF inside the CRITICAL section at line 39, which began inside the IF block"
CSVM$ CRITICAL_END
      SELECT CASE (N)
      A(2) = 2                             ! ERROR "a statement between SELECT CASE and its first CASE"
      CASE (1)
      END SELECT
C     A branch out of a block the others follow the master into must be
C     IF (...) GO TO.
CSVM$ EXCLUSIVE_REGION
      DO K = 1, 2
CSVM$ PDO (LOOPS(I))
         DO I = 1, N
            A(I) = K
         END DO
         IF (A(1)) 60, 70, 70              ! ERROR "this arithmetic IF may branch out of a block"
      END DO
   60 CONTINUE
   70 CONTINUE
CSVM$ EXCLUSIVE_REGION_END
      END
