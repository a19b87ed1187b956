! intrinsics.f90 -- NUMPROC() and MYPROCSET() in directive expressions:
! arrangement extents, the processor map of an indirect distribution (the
! issue's DISTRIBUTE (I) ONTO P(MIN(MAP(I), NUMPROC()))), CYCLIC segments,
! loop chunks, in the specification part and the executable part, in the
! main program and in a subroutine called in exclusive mode whose
! distribution reads a map the master computed. What the program prints
! does not depend on the number of processors. Free form.
program intrinsics
  implicit none
  integer, parameter :: n = 4000
  integer :: map(n), i, k
  real(8) :: a(n), total, part
!SVM$ shared:: a, total
!SVM$ processors:: p(numproc()), q(max(1, numproc()/2))
!SVM$ template:: nodes(n), t(n), half(n)
!SVM$ distribute (cyclic(max(1, 2*numproc() - 1))) onto p:: t
!SVM$ distribute (block) onto q:: half

  do i = 1, n
    map(i) = 1 + mod(i*7, 5)
  end do
!SVM$ distribute (i) onto p(min(map(i), numproc())):: nodes

!SVM$ pdo (loops(i), strategy(on_home(nodes(i))))
  do i = 1, n
    a(i) = mod(i, 23)
  end do
!SVM$ pdo (loops(i), strategy(on_home(t(i))))
  do i = 1, n
    a(i) = a(i) + 1
  end do
!SVM$ pdo (loops(i), strategy(dynamic(max(1, 97/numproc()))))
  do i = 1, n
    a(i) = a(i) * 2
  end do
!SVM$ pdo (loops(i), strategy(on_home(half(i))))
  do i = 1, n
    a(i) = a(i) - 1
  end do

!SVM$ exclusive_region
  do i = 1, n
    map(i) = 1 + mod(i, 3)
  end do
!SVM$ redistribute (cyclic(numproc())) onto p:: t
!SVM$ pdo (loops(i), strategy(on_home(t(i))))
  do i = 1, n
    a(i) = a(i) + map(i)
  end do
  call spread(a, map, n)
  write (*, '(a, f12.1)') 'intrinsics: sum =', sum(a)
!SVM$ exclusive_region_end

  total = 0
!SVM$ barrier
!SVM$ pdo (loops(k), strategy(cyclic(numproc())))
  do k = 1, n
    part = a(k) * k
!SVM$ critical
    total = total + part
!SVM$ critical_end
  end do
!SVM$ barrier
!SVM$ exclusive_region
  write (*, '(a, f16.1)') 'intrinsics: weighted sum =', total
!SVM$ exclusive_region_end
end program

! A template of its own, distributed by the map the caller passes: its
! specification part runs on every processor, with the master's map.
subroutine spread(a, map, m)
  implicit none
  integer :: m, map(m), i
  real(8) :: a(m)
!SVM$ processors:: r(numproc())
!SVM$ template:: s(m)
!SVM$ distribute (i) onto r(1 + mod(map(i) + myprocset()*0, numproc())):: s
!SVM$ pdo (loops(i), strategy(on_home(s(i))))
  do i = 1, m
    a(i) = a(i) + 2*map(i)
  end do
end subroutine
