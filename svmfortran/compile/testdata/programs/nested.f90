! nested.f90 -- nested parallelism (paper, section 3: "multiple
! coarse-grained parallel tasks which are themselves data parallel").
! Free-form source with !SVM$ directives.
!
! Two parallel sections (without ON: the processors are shared out
! evenly).  Each runs a PDO on its own processors, then an inner
! PSECTION with two sections; each inner section runs a PDO, adds a
! partial sum in a CRITICAL section, waits at a BARRIER (over its own
! processors only) so that all of them see the complete sum, and runs a
! second PDO that uses it.  With fewer processors than sections a
! processor runs several sections one after the other.
!
! Exercises: PSECTION inside SECTION, PDOs (BLOCK, CYCLIC, CYCLIC(2),
! CYCLIC(3), DYNAMIC, DYNAMIC(16)) inside sections, named CRITICAL
! sections, BARRIER inside sections.  (No ON_HOME here: a template of
! the main program is distributed over all processors, not over a
! section's; see fig1_sections.f for templates inside sections.)
! Integer data: exact output.
program nested
  implicit none
  integer, parameter :: n = 6000, h = n / 2
  integer :: x(n), y(n), xa(n), ya(n)
  integer(8) :: s(4)
!SVM$ SHARED:: x, y, xa, ya, s
  integer :: i
  integer(8) :: part, c(4)

!SVM$ EXCLUSIVE_REGION
  do i = 1, 4
     s(i) = 0
  end do
!SVM$ EXCLUSIVE_REGION_END

!SVM$ PSECTION
!SVM$ SECTION
  ! ---- outer section 1: x ----
!SVM$ PDO (LOOPS(i), STRATEGY(BLOCK))
  do i = 1, n
     x(i) = mod(i * 37, 1009)
  end do
!SVM$ PSECTION
!SVM$ SECTION
  ! first half of x
  part = 0
!SVM$ PDO (LOOPS(i), STRATEGY(CYCLIC(2)))
  do i = 1, h
     part = part + x(i)
  end do
!SVM$ CRITICAL CS1
  s(1) = s(1) + part
!SVM$ CRITICAL_END CS1
!SVM$ BARRIER
!SVM$ PDO (LOOPS(i))
  do i = 1, h
     xa(i) = 3 * x(i) + int(mod(s(1), 17_8))
  end do
!SVM$ SECTION
  ! second half of x
  part = 0
!SVM$ PDO (LOOPS(i), STRATEGY(DYNAMIC(16)))
  do i = h + 1, n
     part = part + 2 * x(i)
  end do
!SVM$ CRITICAL CS2
  s(2) = s(2) + part
!SVM$ CRITICAL_END CS2
!SVM$ BARRIER
!SVM$ PDO (LOOPS(i))
  do i = h + 1, n
     xa(i) = x(i) - int(mod(s(2), 23_8))
  end do
!SVM$ PSECTION_END

!SVM$ SECTION
  ! ---- outer section 2: y ----
!SVM$ PDO (LOOPS(i), STRATEGY(CYCLIC))
  do i = 1, n
     y(i) = mod(i * i, 1013)
  end do
!SVM$ PSECTION
!SVM$ SECTION
  part = 0
!SVM$ PDO (LOOPS(i), STRATEGY(BLOCK))
  do i = 1, n
     if (mod(i, 2) == 0) part = part + y(i)
  end do
!SVM$ CRITICAL CS3
  s(3) = s(3) + part
!SVM$ CRITICAL_END CS3
!SVM$ BARRIER
!SVM$ PDO (LOOPS(i), STRATEGY(BLOCK))
  do i = 1, h
     ya(2 * i) = y(2 * i) + int(mod(s(3), 101_8))
  end do
!SVM$ SECTION
  part = 0
!SVM$ PDO (LOOPS(i), STRATEGY(CYCLIC(3)))
  do i = 1, n
     if (mod(i, 2) == 1) part = part + 5 * y(i)
  end do
!SVM$ CRITICAL CS4
  s(4) = s(4) + part
!SVM$ CRITICAL_END CS4
!SVM$ BARRIER
!SVM$ PDO (LOOPS(i), STRATEGY(DYNAMIC))
  do i = 1, n
     if (mod(i, 2) == 1) ya(i) = y(i) * 2 - int(mod(s(4), 7_8))
  end do
!SVM$ PSECTION_END
!SVM$ PSECTION_END

!SVM$ EXCLUSIVE_REGION
  c = 0
  do i = 1, n
     c(1) = c(1) + int(x(i), 8) * i
     c(2) = c(2) + int(y(i), 8) * i
     c(3) = c(3) + int(xa(i), 8) * i
     c(4) = c(4) + int(ya(i), 8) * i
  end do
  write(*, '(A,4I12)') 'nested partial sums s(1:4) = ', s
  write(*, '(A,I16)') 'nested sum x(i)*i  = ', c(1)
  write(*, '(A,I16)') 'nested sum y(i)*i  = ', c(2)
  write(*, '(A,I16)') 'nested sum xa(i)*i = ', c(3)
  write(*, '(A,I16)') 'nested sum ya(i)*i = ', c(4)
!SVM$ EXCLUSIVE_REGION_END
end program nested
