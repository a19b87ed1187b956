C     Exclusive mode: what the compiler cannot make right, each with the
C     diagnostic it must produce.
      PROGRAM EXCL
      INTEGER N, I, K, M(10)
      REAL*8 A(100), S
CSVM$ SHARED:: A
CSVM$ EXCLUSIVE_REGION
      N = 100
C     A function that runs parallel constructs cannot be called where
C     only the master evaluates expressions.
      S = TOTAL(A, N)                      ! ERROR "function TOTAL runs SVM code"
C     Every processor evaluates the bounds of a DO loop the others
C     follow the master into: they cannot call a function.
      DO K = 1, LAST(N)                    ! ERROR "it calls LAST"
CSVM$ PDO (LOOPS(I))
         DO I = 1, N
            A(I) = K
         END DO
C     A branch out of such a loop must be IF (...) GO TO.
         GO TO (20, 30), K                 ! ERROR "this GO TO may branch out of a block"
      END DO
   20 CONTINUE
   30 CONTINUE
C     A branch may not leave the region.
      IF (N .GT. 0) GO TO 40               ! ERROR "the branch to 40 leaves the EXCLUSIVE_REGION at line 7"
C     The subroutine's declarations read COMMON /SIZES/ of the caller.
      CALL SIZED(A)                        ! ERROR "declare COMMON /SIZES/ here"
C     A subroutine the master alone runs sets a COMMON block.
      CALL SETCOM                          ! ERROR "SETCOM assigns COMMON /HIDDEN/, and here only the master runs it"
CSVM$ EXCLUSIVE_REGION_END
   40 CONTINUE
CSVM$ PDO (LOOPS(I))
      DO I = 1, N
         S = TOTAL(A, I)                   ! ERROR "function TOTAL runs SVM code"
         IF (I .EQ. 5) EXIT                ! ERROR "EXIT from the parallel loop at line 33"
      END DO
CSVM$ CRITICAL
      IF (N .EQ. 0) RETURN                 ! ERROR "RETURN inside the CRITICAL at line 37"
CSVM$ CRITICAL_END
      DO K = 1, 2
CSVM$ EXCLUSIVE_REGION                     ! ERROR "EXCLUSIVE_REGION is not closed inside the DO loop at line 40"
      END DO
CSVM$ EXCLUSIVE_REGION
      DO K = 1, 2
CSVM$ EXCLUSIVE_REGION_END                 ! ERROR "EXCLUSIVE_REGION_END inside the DO loop at line 44, which began inside the EXCLUSIVE_REGION"
      END DO
      END

      REAL*8 FUNCTION TOTAL(X, L)
      INTEGER L, J
      REAL*8 X(L)
CSVM$ PDO (LOOPS(J))
      DO J = 1, L
         X(J) = 0
      END DO
      TOTAL = 0
      END

      INTEGER FUNCTION LAST(L)
      INTEGER L
      LAST = L
      END

      SUBROUTINE SETCOM
      COMMON /HIDDEN/ NH
      NH = 1
      END

      SUBROUTINE SIZED(X)
      COMMON /SIZES/ NS
      REAL*8 X(NS)
CSVM$ PDO (LOOPS(J))
      DO J = 1, NS
         X(J) = 0
      END DO
      END

C     Private data the master sets and a construct reads must be sent;
C     some kinds of variable cannot be.
      SUBROUTINE VALUES(B, C, D)
      INTEGER J
      REAL*8 B(*), C(:), D(10)
      REAL*8, POINTER :: P(:)
      REAL*8 Q(:)
      TYPE(T) R
      B(1) = 1
      C(1) = 1
      P(1) = 1
      Q(1) = 1
      R%X = 1
CSVM$ EXCLUSIVE_REGION
CSVM$ PDO (LOOPS(J))                       ! ERROR "it is an assumed-size array"
      DO J = 1, 10
         D(J) = B(J)
      END DO
CSVM$ PDO (LOOPS(J))                       ! ERROR "it is an assumed-shape array"
      DO J = 1, 10
         D(J) = C(J)
      END DO
CSVM$ PDO (LOOPS(J))                       ! ERROR "it is a POINTER"
      DO J = 1, 10
         D(J) = P(J)
      END DO
CSVM$ PDO (LOOPS(J))                       ! ERROR "it has a deferred shape"
      DO J = 1, 10
         D(J) = Q(J)
      END DO
CSVM$ PDO (LOOPS(J))                       ! ERROR "it has a derived type"
      DO J = 1, 10
         D(J) = R%X
      END DO
CSVM$ EXCLUSIVE_REGION_END
      END

C     NUMPROC is the module's; ENTRY is not translated.
      SUBROUTINE DECL(X)
      INTEGER NUMPROC                      ! ERROR "NUMPROC is SVM-Fortran's intrinsic (module svm): do not declare it"
      REAL*8 X(10)
      INTEGER J
CSVM$ PDO (LOOPS(J))
      DO J = 1, NUMPROC()
         X(J) = 0
      END DO
      ENTRY OTHER(X)                       ! ERROR "ENTRY in SUBROUTINE DECL, which runs SVM code"
      END

C     I/O in a subroutine the build calls in replicated mode.
      SUBROUTINE SHOW(X)
      REAL*8 X(10)
CSVM$ BARRIER
      PRINT *, X(1)                        ! WARNING "it is called in replicated mode at testdata/errors/exclusive.f:136"
      END

      SUBROUTINE CALLER(X)
      REAL*8 X(10)
      CALL SHOW(X)
      END

C     Directives of an internal procedure are not translated.
      SUBROUTINE HOST
      CALL INNER
      CONTAINS
      SUBROUTINE INNER
CSVM$ BARRIER                              ! ERROR "SVM directive in a procedure after CONTAINS"
      END SUBROUTINE
      END

      MODULE M
      REAL*8 Z(10)
CSVM$ SHARED:: Z                           ! ERROR "SVM directive in MODULE M"
      END MODULE
