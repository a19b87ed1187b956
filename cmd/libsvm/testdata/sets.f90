! Nested processor sets: two parallel sections, each with its own loop,
! set barriers and two inner sections; a set of the master alone; the
! master checks what every set wrote.
program sets
  use svm
  implicit none
  integer, parameter :: n = 600
  integer(c_intptr_t) :: pa
  integer(8) :: part(8)
  pointer (pa, part)
  integer(8) :: want(8)
  integer :: s, inner, h, i, lo(1), hi(1), np, who

  call svm_check(svm_init(), 'svm_init')
  np = numproc()
  pa = svm_address(svm_shared_alloc(int(8 * 8, c_size_t)))
  if (myprocset() == 0) part = 0
  call svm_pset_barrier()

  call svm_sections_begin(2)
  do
    s = svm_section_next()
    if (s == 0) exit
    ! A loop over this section's set: squares (section 1) or cubes (2).
    h = svm_loop_begin(merge(SVM_SCHED_BLOCK, SVM_SCHED_CYCLIC, s == 1), [1], [n], chunk=5)
    do while (svm_loop_next(h, lo, hi))
      call svm_critical_begin('part')
      do i = lo(1), hi(1)
        part(s) = part(s) + int(i, 8) ** (s + 1)
      end do
      call svm_critical_end('part')
    end do
    call svm_pset_barrier()
    ! The set's master records its size once every member has added.
    if (myprocset() == 0) part(2 + s) = numproc()
    call svm_pset_barrier()
    ! Two inner sections: each records the section it is nested in.
    call svm_sections_begin(2)
    do
      inner = svm_section_next()
      if (inner == 0) exit
      if (myprocset() == 0) part(4 + 2 * (s - 1) + inner) = 10 * s + inner
      call svm_pset_barrier()
    end do
  end do

  ! The master alone, in a set of its own.
  who = -1
  if (svm_pset_enter([0], 1) /= 0) then
    who = numproc()
    call svm_pset_barrier()
    call svm_pset_leave()
  end if
  call svm_pset_barrier()

  if (myprocset() == 0) then
    want = 0
    do i = 1, n
      want(1) = want(1) + int(i, 8) ** 2
      want(2) = want(2) + int(i, 8) ** 3
    end do
    want(3) = max(1, np - np / 2)  ! the earlier section gets the larger half
    want(4) = max(1, np / 2)
    want(5:8) = [11, 12, 21, 22]
    if (any(part /= want) .or. who /= 1) then
      write (0, *) 'got ', part, who
      write (0, *) 'want', want, 1
      error stop 1
    end if
    write (*, '(a, i0, a)') 'sets ok: ', np, ' ranks'
  end if
  call svm_check(svm_finalize(), 'svm_finalize')
end program
