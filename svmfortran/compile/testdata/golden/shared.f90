! Shared variables and COMMON blocks, freed at RETURN; critical sections
! and page locks (free form).
program shared
  implicit none
  integer, parameter :: n = 10
  real(8) :: a(n), total
  integer :: k
  common /grid/ u(n, n), v(n)
  real(8) :: u, v
!SVM$ SHARED:: a, total, /grid/
  total = 0
  call work(a, n, total)
  print *, total
end program

subroutine work(a, n, total)
  implicit none
  integer :: n, i
  real(8) :: a(n), total, w(n)
!SVM$ SHARED:: w
  if (n < 1) return
!SVM$ PDO (LOOPS(i))
  do i = 1, n
    w(i) = i
!SVM$ CRITICAL sum
    total = total + w(i)
!SVM$ CRITICAL_END sum
  end do
!SVM$ PAGE_LOCK(w)
  w(1) = 0
!SVM$ PAGE_UNLOCK(w)
  return
end subroutine
