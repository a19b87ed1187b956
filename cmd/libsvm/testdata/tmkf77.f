C     A Fortran 77 program on TreadMarks' F77 bindings: the globals in
C     COMMON /TMK/, shared memory from TMK_MALLOC through a Cray pointer,
C     its address handed out with TMK_DISTRIBUTE, blocks summed under a
C     lock, a condition variable for the last process to report.
      PROGRAM TMKF77
      INTEGER PROCID, NPROCS, PGSIZE, NPAGES
      COMMON /TMK/ PROCID, NPROCS, PGSIZE, NPAGES
      INTEGER N
      PARAMETER (N = 20000)
      INTEGER*8 TMK_MALLOC, ADDR
      EXTERNAL TMK_MALLOC
      DOUBLE PRECISION A(0:N), WANT, PART
      INTEGER DONE(1)
      POINTER (PA, A)
      POINTER (PD, DONE)
      INTEGER I, LO, HI, ZERO, ONE
      COMMON /SHARED/ ADDR
      ZERO = 0
      ONE = 1
      CALL TMK_STARTUP()
      IF (PROCID .EQ. 0) THEN
         ADDR = TMK_MALLOC(8 * (N + 2))
         PA = ADDR
         A(0) = 0
         PD = ADDR + 8 * (N + 1)
         DONE(1) = 0
         CALL TMK_DISTRIBUTE(ADDR, 8)
      END IF
      CALL TMK_BARRIER(ZERO)
      PA = ADDR
      PD = ADDR + 8 * (N + 1)
      LO = 1 + (N * PROCID) / NPROCS
      HI = (N * (PROCID + 1)) / NPROCS
      PART = 0
      DO 10 I = LO, HI
         A(I) = DBLE(I) * I
         PART = PART + A(I)
   10 CONTINUE
      CALL TMK_LOCK_ACQUIRE(ONE)
      A(0) = A(0) + PART
      DONE(1) = DONE(1) + 1
      CALL TMK_LOCK_COND_SIGNAL(ONE, ZERO)
      CALL TMK_LOCK_RELEASE(ONE)
      IF (PROCID .EQ. 0) THEN
         CALL TMK_LOCK_ACQUIRE(ONE)
   20    IF (DONE(1) .LT. NPROCS) THEN
            CALL TMK_LOCK_COND_WAIT(ONE, ZERO)
            GO TO 20
         END IF
         WANT = DBLE(N) * (N + 1) * (2 * N + 1) / 6
         IF (A(0) .NE. WANT) THEN
            PRINT *, 'tmkf77: sum', A(0), 'want', WANT
            CALL TMK_EXIT(ONE)
         END IF
         PRINT '(A,I2,A,F16.1)', 'tmkf77 ok:', NPROCS,
     &      ' processes, sum', A(0)
         CALL TMK_LOCK_RELEASE(ONE)
      END IF
      CALL TMK_BARRIER(ZERO)
      CALL TMK_EXIT(ZERO)
      END
