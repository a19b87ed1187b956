C     A shared COMMON block declared in an INCLUDE file.
      PROGRAM INC
      INCLUDE 'grid.inc'
      INTEGER I
CSVM$ SHARED:: /GRID/
CSVM$ PDO (LOOPS(I))
      DO I = 1, NX
         H(I) = I
      END DO
      END
