! modules.f90 -- parameters kept in a module, as a Fortran 90 programmer
! keeps them: the master sets them in an exclusive region; a subroutine
! called there reads them in its parallel loop; after the region,
! replicated code uses them, directly and through a function called in a
! parallel loop. Integer-valued real(8) data: exact output.
module params
  implicit none
  integer :: n
  real(8) :: scale, table(5)
end module

module fields
  implicit none
  integer, parameter :: nmax = 3000
end module

program modules
  use params
  use fields
  implicit none
  real(8) :: a(nmax), total, part
!SVM$ shared:: a, total
  integer :: i

!SVM$ exclusive_region
  n = nmax - 11
  scale = 3
  do i = 1, 5
    table(i) = 10 * i
  end do
  call fill(a)
  write (*, '(a, i6, f12.1)') 'modules: n, sum =', n, sum(a(1:n))
!SVM$ exclusive_region_end

  total = 0
!SVM$ barrier
!SVM$ pdo (loops(i), strategy(cyclic(4)))
  do i = 1, n
    part = a(i) + weight(i)
!SVM$ critical
    total = total + part
!SVM$ critical_end
  end do
!SVM$ barrier
!SVM$ exclusive_region
  write (*, '(a, f14.1)') 'modules: total =', total
!SVM$ exclusive_region_end

contains

  ! A function of the program: the others evaluate it with the module's
  ! values the master set.
  real(8) function weight(k)
    integer, intent(in) :: k
    weight = table(mod(k, 5) + 1) * scale
  end function
end program

subroutine fill(a)
  use params
  use fields
  implicit none
  real(8) :: a(nmax)
  integer :: i
!SVM$ pdo (loops(i))
  do i = 1, nmax
    a(i) = mod(i, 9) * scale + table(mod(i, 5) + 1)
  end do
end subroutine
