! matmul.f90 -- dense matrix product C = A x B (N = 120, REAL*8) with
! work distributed by a 2-D template onto a 2-D processor arrangement,
! free-form source with !SVM$ directives.
!
! Exercises: a 2-D PROCESSORS arrangement Q(MIN(2,NUMPROC()),
! NUMPROC()/MIN(2,NUMPROC())) -- at most NUMPROC() processors for any
! count (1 -> 1x1, 2 -> 2x1, 3 -> 2x1 with one processor idle, 4 -> 2x2,
! 5 -> 2x2, 8 -> 2x4); DISTRIBUTE (BLOCK, BLOCK) onto it; PDO over the
! (J, I) nest with LOOPS(J, I) and ON_HOME(T(I, J)); a second template
! distributed (*, CYCLIC(8)) onto a 1-D arrangement for D = B x A;
! directive continuation lines (& ... !SVM$& and & ... !SVM$);
! reductions in CRITICAL sections.  Integer-valued data: exact output
! (trace(AB) = trace(BA) is a built-in check).
program matmul_test
  implicit none
  integer, parameter :: n = 120
  real(8) :: a(n, n), b(n, n), c(n, n), d(n, n)
  real(8) :: trc, sumc, trd, sumd
!SVM$ SHARED:: a, b, c, d, trc, sumc, trd, sumd
  integer :: i, j, k
  real(8) :: s, ptr, psum, chk
!SVM$ PROCESSORS:: Q(MIN(2, NUMPROC()), &
!SVM$              NUMPROC() / MIN(2, NUMPROC()))
!SVM$ PROCESSORS:: P(NUMPROC())
!SVM$ TEMPLATE:: T(N, N), TD(N, N)
!SVM$ DISTRIBUTE (BLOCK, BLOCK) ONTO Q:: T
!SVM$ DISTRIBUTE (*, CYCLIC(8)) ONTO P:: TD

!SVM$ EXCLUSIVE_REGION
  trc = 0
  sumc = 0
  trd = 0
  sumd = 0
!SVM$ EXCLUSIVE_REGION_END

!SVM$ PDO (LOOPS(j, i), STRATEGY(ON_HOME(T(i, j))))
  do j = 1, n
     do i = 1, n
        a(i, j) = dble(mod(i * i + 3 * j, 11) - 5)
        b(i, j) = dble(mod(2 * i + j * j, 13) - 6)
     end do
  end do

  ! C = A x B: element (i, j) where T(i, j) lives
!SVM$ PDO (LOOPS(j, i), &
!SVM$&     STRATEGY(ON_HOME(T(i, j))))
  do j = 1, n
     do i = 1, n
        s = 0
        do k = 1, n
           s = s + a(i, k) * b(k, j)
        end do
        c(i, j) = s
     end do
  end do

  ! D = B x A: columns dealt out in chunks of 8
!SVM$ PDO (LOOPS(j, i), STRATEGY(ON_HOME(TD(i, j))))
  do j = 1, n
     do i = 1, n
        s = 0
        do k = 1, n
           s = s + b(i, k) * a(k, j)
        end do
        d(i, j) = s
     end do
  end do

  ! trace and weighted sum of C, partial sums combined in CRITICAL
  ptr = 0
  psum = 0
!SVM$ PDO (LOOPS(j, i), STRATEGY(ON_HOME(T(i, j))))
  do j = 1, n
     do i = 1, n
        if (i == j) ptr = ptr + c(i, j)
        psum = psum + c(i, j) * dble(mod(i + j, 3) + 1)
     end do
  end do
!SVM$ CRITICAL CSUM
  trc = trc + ptr
  sumc = sumc + psum
!SVM$ CRITICAL_END CSUM

  ptr = 0
  psum = 0
!SVM$ PDO (LOOPS(i), STRATEGY(CYCLIC(7)))
  do i = 1, n
     ptr = ptr + d(i, i)
     do j = 1, n
        psum = psum + d(i, j) * dble(mod(i + j, 3) + 1)
     end do
  end do
!SVM$ CRITICAL DSUM
  trd = trd + ptr
  sumd = sumd + psum
!SVM$ CRITICAL_END DSUM
!SVM$ BARRIER

!SVM$ EXCLUSIVE_REGION
  chk = 0
  do j = 1, n
     do i = 1, n
        chk = chk + c(i, j) * dble(i) - d(i, j) * dble(j)
     end do
  end do
  write(*, '(A,ES24.16)') 'matmul trace(C)   = ', trc
  write(*, '(A,ES24.16)') 'matmul sum C      = ', sumc
  write(*, '(A,ES24.16)') 'matmul trace(D)   = ', trd
  write(*, '(A,ES24.16)') 'matmul sum D      = ', sumd
  write(*, '(A,ES24.16)') 'matmul checksum   = ', chk
  write(*, '(A,3F10.1)') 'matmul C(1,1), C(60,61), C(N,N) = ', &
       c(1, 1), c(60, 61), c(n, n)
!SVM$ EXCLUSIVE_REGION_END
end program matmul_test
