! An exclusive region compiled as the paper's Figure 4 shows: the master
! runs the region's code, and re-activates the others with continuation
! codes for a coordinated call (a parallel loop) and for the region's end.
! The private values the master set travel with the dispatch.
program dispatch
  use svm
  implicit none
  integer(c_intptr_t) :: px
  integer(8) :: x(3)
  pointer (px, x)
  integer :: code, k
  real(8) :: scale(2)

  call svm_check(svm_init(), 'svm_init')
  px = svm_address(svm_shared_alloc(int(8 * 3, c_size_t)))
! CSVM$ EXCLUSIVE_REGION
45002 if (myprocset() /= 0) then
    code = svm_dispatch_recv()
    select case (code)
    case (1)
      goto 45003
    case (2)
      goto 45004
    case default
      write (0, *) 'unknown continuation code', code
      error stop 1
    end select
  end if
  x(1) = 1
  x(3) = 0
  k = 100
  scale = [2.5d0, -1d0]
  call svm_dispatch_put(svm_pointer(loc(k)), int(storage_size(k)/8, c_size_t))
  call svm_dispatch_put(svm_pointer(loc(scale)), int(size(scale), c_size_t)*(storage_size(scale)/8))
  call svm_dispatch_send(2)
45004 continue
  if (myprocset() /= 0) then
    call svm_dispatch_get(svm_pointer(loc(k)), int(storage_size(k)/8, c_size_t))
    call svm_dispatch_get(svm_pointer(loc(scale)), int(size(scale), c_size_t)*(storage_size(scale)/8))
  end if
  if (scale(1) /= 2.5d0 .or. scale(2) /= -1d0) then
    write (0, *) 'rank', svm_rank(), 'has scale', scale
    error stop 1
  end if
  call sub(x, k)
  if (myprocset() /= 0) goto 45002
  x(2) = x(3) + 1
  call svm_dispatch_send(1)
45003 continue
! CSVM$ EXCLUSIVE_REGION_END
  if (x(1) /= 1 .or. x(3) /= 5050 .or. x(2) /= 5051) then
    write (0, *) 'rank', svm_rank(), 'sees', x
    error stop 1
  end if
  if (myprocset() == 0) write (*, '(a, i0, a)') 'exclusive ok: ', numproc(), ' ranks'
  call svm_check(svm_finalize(), 'svm_finalize')
contains
  ! A coordinated call: every member of the set runs its share of a loop.
  subroutine sub(x, n)
    integer(8), intent(inout) :: x(3)
    integer, intent(in) :: n
    integer :: h, i, lo(1), hi(1)
    integer(8) :: local
    h = svm_loop_begin(SVM_SCHED_BLOCK, [1], [n])
    do while (svm_loop_next(h, lo, hi))
      local = 0
      do i = lo(1), hi(1)
        local = local + i
      end do
      call svm_critical_begin('x')
      x(3) = x(3) + local
      call svm_critical_end('x')
    end do
  end subroutine
end program
