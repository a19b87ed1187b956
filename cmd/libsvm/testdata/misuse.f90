! Runtime calls misused, one per run (the first argument names which):
! each must stop the program with a message naming what was wrong.
program misuse
  use svm
  implicit none
  character(len=32) :: what
  integer :: p, t, h, lo(1), hi(1)

  call get_command_argument(1, what)
  call svm_check(svm_init(), 'svm_init')
  p = svm_processors('P', [numproc()])
  t = svm_template('T', 1)
  select case (trim(what))
  case ('empty')
    call svm_distribute(t, p, [SVM_BLOCK], [0])
  case ('map')
    call svm_template_create(t, [1], [4])
    call svm_distribute_indirect(t, p, [1, numproc() + 1, 1, 1])
  case ('undefined')
    call svm_template_create(t, [1], [10])
    h = svm_loop_begin(SVM_SCHED_ON_HOME, [1], [10], t=t)
    do while (svm_loop_next(h, lo, hi))
    end do
  case ('ranks')
    t = svm_template('T2', 2)
    call svm_template_create(t, [1, 1], [10, 10])
    call svm_distribute(t, p, [SVM_BLOCK, SVM_BLOCK], [0, 0])
  case ('dispatch')
    if (myprocset() == 0) h = svm_dispatch_recv()
  case ('values')
    ! The master sends 4 bytes; the others take 8.
    if (myprocset() == 0) then
      call svm_dispatch_put(svm_pointer(loc(p)), 4_c_size_t)
      call svm_dispatch_send(1)
    else
      h = svm_dispatch_recv()
      call svm_dispatch_get(svm_pointer(loc(lo)), 8_c_size_t)
    end if
  end select
  call svm_check(svm_finalize(), 'svm_finalize')
end program
