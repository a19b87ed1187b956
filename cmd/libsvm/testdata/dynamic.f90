! Dynamic and semi-dynamic loops, a critical section and a page lock: the
! iterations have uneven work; the master checks the results, and that the
! semi-dynamic replay ran every iteration where the recording run did.
program dynamic
  use svm
  implicit none
  integer, parameter :: n = 400
  integer(c_intptr_t) :: pa, pw, pt
  integer(8) :: a(n)
  integer :: who(n)
  integer(8) :: tot(4)
  pointer (pa, a), (pw, who), (pt, tot)
  integer :: h, i, k, lo(1), hi(1), sched, pass, moved, np
  integer(8) :: local, want

  call svm_check(svm_init(), 'svm_init')
  np = numproc()
  pa = svm_address(svm_shared_alloc(int(8 * n, c_size_t)))
  pw = svm_address(svm_shared_alloc(int(4 * n, c_size_t)))
  pt = svm_address(svm_common('TOTALS', int(8 * 4, c_size_t)))
  if (pt /= svm_address(svm_common('TOTALS', int(8 * 4, c_size_t)))) error stop 'COMMON /TOTALS/ moved'
  if (myprocset() == 0) tot = 0
  call svm_pset_barrier()

  ! Self-scheduled twice, chunks of 3: a(i) = sum of 1..i (uneven work).
  do pass = 1, 2
    h = svm_loop_begin(SVM_SCHED_DYNAMIC, [1], [n], chunk=3)
    do while (svm_loop_next(h, lo, hi))
      local = 0
      do i = lo(1), hi(1)
        a(i) = 0
        do k = 1, i
          a(i) = a(i) + k
        end do
        local = local + a(i)
      end do
      call svm_critical_begin('tot')
      tot(pass) = tot(pass) + local
      call svm_critical_end('tot')
    end do
  end do

  ! Semi-dynamic: recorded in SCHED on the first pass, replayed on the second.
  sched = svm_template('SCHED', 1)
  call svm_template_create(sched, [1], [n])
  moved = 0
  do pass = 1, 2
    h = svm_loop_begin(SVM_SCHED_SEMI_DYNAMIC, [1], [n], chunk=7, t=sched)
    do while (svm_loop_next(h, lo, hi))
      do i = lo(1), hi(1)
        if (pass == 1) who(i) = svm_rank()
        if (pass == 2 .and. who(i) /= svm_rank()) moved = moved + 1
      end do
    end do
  end do
  ! Page lock on the totals' page: every rank adds its count of moves.
  call svm_page_lock(svm_pointer(pt), int(8 * 4, c_size_t))
  tot(3) = tot(3) + moved
  tot(4) = tot(4) + 1
  call svm_page_unlock(svm_pointer(pt), int(8 * 4, c_size_t))
  call svm_pset_barrier()

  if (myprocset() == 0) then
    want = 0
    do i = 1, n
      want = want + int(i, 8) * (i + 1) / 2
    end do
    if (tot(1) /= want .or. tot(2) /= want .or. tot(3) /= 0 .or. tot(4) /= np) then
      write (0, *) 'totals', tot, 'want', want, want, 0, np
      error stop 1
    end if
    write (*, '(a, i0, a, i0)') 'dynamic ok: ', np, ' ranks, total ', tot(1)
  end if
  call svm_shared_free(svm_pointer(pw))
  call svm_shared_free(svm_pointer(pa))
  call svm_commons_free()
  call svm_check(svm_finalize(), 'svm_finalize')
end program
