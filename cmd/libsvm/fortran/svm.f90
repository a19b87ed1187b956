! Module svm: SVM for Fortran programs, through ISO_C_BINDING.
!
! The native calls of svm.h (shared memory, locks, barriers) and the
! SVM-Fortran runtime of svm_fortran.h (processor sets, templates,
! distributions, loop schedules, dispatch, critical sections, shared
! allocation). Build with svmf fc, which adds this module, -fcray-pointer
! and the libraries; run with svmf run -np N ./prog.
!
! Native calls return 0, or -1 with the message in svm_error_message().
! Runtime calls stop the program with a message naming what was wrong.
!
! Shared memory is usable through Cray pointers:
!     integer(c_intptr_t) :: pa;  real(8) :: a(n);  pointer (pa, a)
!     pa = svm_address(svm_shared_alloc(int(8*n, c_size_t)))
! or through C_F_POINTER:
!     call c_f_pointer(svm_shared_alloc(int(8*n, c_size_t)), a, [n])
!
! Copyright the SVM authors. Licensed under the Apache License, Version 2.0.
module svm
  use, intrinsic :: iso_c_binding
  implicit none

  ! Distribution formats of a template dimension (svm_distribute).
  integer(c_int), parameter :: SVM_COLLAPSED = 0, SVM_BLOCK = 1, SVM_CYCLIC = 2, SVM_GENERAL_BLOCK = 3
  ! Loop scheduling strategies (svm_loop_begin).
  integer(c_int), parameter :: SVM_SCHED_BLOCK = 1, SVM_SCHED_CYCLIC = 2, SVM_SCHED_ON_HOME = 3, &
                               SVM_SCHED_DYNAMIC = 4, SVM_SCHED_SEMI_DYNAMIC = 5

  ! The *_c interfaces are the C calls behind the Fortran wrappers of the
  ! same name: call the wrappers.
  private :: svm_stop

  interface
    integer(c_int) function svm_init() bind(C, name="svm_init")
      import :: c_int
    end function
    integer(c_int) function svm_finalize() bind(C, name="svm_finalize")
      import :: c_int
    end function
    integer(c_int) function svm_rank() bind(C, name="svm_rank")
      import :: c_int
    end function
    integer(c_int) function svm_nprocs() bind(C, name="svm_nprocs")
      import :: c_int
    end function
    integer(c_size_t) function svm_page_size() bind(C, name="svm_page_size")
      import :: c_size_t
    end function
    integer(c_int) function svm_alloc(size, p) bind(C, name="svm_alloc")
      import :: c_int, c_size_t, c_ptr
      integer(c_size_t), value :: size
      type(c_ptr), intent(out) :: p
    end function
    integer(c_int) function svm_malloc(size, p) bind(C, name="svm_malloc")
      import :: c_int, c_size_t, c_ptr
      integer(c_size_t), value :: size
      type(c_ptr), intent(out) :: p
    end function
    integer(c_int) function svm_free(p) bind(C, name="svm_free")
      import :: c_int, c_ptr
      type(c_ptr), value :: p
    end function
    integer(c_int) function svm_share(root, p, out) bind(C, name="svm_share")
      import :: c_int, c_ptr
      integer(c_int), value :: root
      type(c_ptr), value :: p
      type(c_ptr), intent(out) :: out
    end function
    integer(c_int) function svm_lock(id) bind(C, name="svm_lock")
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int) function svm_unlock(id) bind(C, name="svm_unlock")
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int) function svm_barrier(id) bind(C, name="svm_barrier")
      import :: c_int
      integer(c_int), value :: id
    end function
    integer(c_int) function svm_fetch_add(counter, delta, old) bind(C, name="svm_fetch_add")
      import :: c_int, c_int32_t, c_int64_t
      integer(c_int32_t), value :: counter
      integer(c_int64_t), value :: delta
      integer(c_int64_t), intent(out) :: old
    end function
    integer(c_int) function svm_set_home(p, size, home) bind(C, name="svm_set_home")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t), value :: size
      integer(c_int), value :: home
    end function
    integer(c_int) function svm_validate(p, size, write) bind(C, name="svm_validate")
      import :: c_int, c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t), value :: size
      integer(c_int), value :: write
    end function
    integer(c_size_t) function svm_last_error_c(buf, len) bind(C, name="svm_last_error")
      import :: c_size_t, c_char
      character(kind=c_char) :: buf(*)
      integer(c_size_t), value :: len
    end function

    ! The SVM-Fortran runtime (svm_fortran.h). NUMPROC() and MYPROCSET()
    ! keep the paper's names; they change nothing, so they may appear in
    ! specification expressions (REAL W(NUMPROC())).
    pure integer(c_int) function numproc() bind(C, name="svm_numproc")
      import :: c_int
    end function
    pure integer(c_int) function myprocset() bind(C, name="svm_myprocset")
      import :: c_int
    end function
    integer(c_int) function svm_pset_enter(positions, n) bind(C, name="svm_pset_enter")
      import :: c_int
      integer(c_int), intent(in) :: positions(*)
      integer(c_int), value :: n
    end function
    subroutine svm_pset_leave() bind(C, name="svm_pset_leave")
    end subroutine
    subroutine svm_pset_barrier() bind(C, name="svm_pset_barrier")
    end subroutine
    subroutine svm_sections_begin_c(n, sizes, nsizes) bind(C, name="svm_sections_begin")
      import :: c_int
      integer(c_int), value :: n, nsizes
      integer(c_int), intent(in) :: sizes(*)
    end subroutine
    integer(c_int) function svm_section_next() bind(C, name="svm_section_next")
      import :: c_int
    end function
    subroutine svm_dispatch_send(code) bind(C, name="svm_dispatch_send")
      import :: c_int
      integer(c_int), value :: code
    end subroutine
    integer(c_int) function svm_dispatch_recv() bind(C, name="svm_dispatch_recv")
      import :: c_int
    end function
    ! The values of a dispatch: n bytes at p (svm_pointer(loc(x))).
    subroutine svm_dispatch_put(p, n) bind(C, name="svm_dispatch_put")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t), value :: n
    end subroutine
    subroutine svm_dispatch_get(p, n) bind(C, name="svm_dispatch_get")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t), value :: n
    end subroutine
    integer(c_int) function svm_processors_c(name, namelen, rank, extents) bind(C, name="svm_processors")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: namelen, rank
      integer(c_int), intent(in) :: extents(*)
    end function
    integer(c_int) function svm_template_c(name, namelen, rank) bind(C, name="svm_template")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: namelen, rank
    end function
    subroutine svm_release_processors(p) bind(C, name="svm_release_processors")
      import :: c_int
      integer(c_int), value :: p
    end subroutine
    subroutine svm_release_template(t) bind(C, name="svm_release_template")
      import :: c_int
      integer(c_int), value :: t
    end subroutine
    subroutine svm_template_create(t, lo, hi) bind(C, name="svm_template_create")
      import :: c_int
      integer(c_int), value :: t
      integer(c_int), intent(in) :: lo(*), hi(*)
    end subroutine
    subroutine svm_template_define(t, lo, hi) bind(C, name="svm_template_define")
      import :: c_int
      integer(c_int), value :: t
      integer(c_int), intent(in) :: lo(*), hi(*)
    end subroutine
    subroutine svm_template_undef(t) bind(C, name="svm_template_undef")
      import :: c_int
      integer(c_int), value :: t
    end subroutine
    subroutine svm_template_destroy(t) bind(C, name="svm_template_destroy")
      import :: c_int
      integer(c_int), value :: t
    end subroutine
    subroutine svm_distribute_c(t, p, formats, segments, sizes) bind(C, name="svm_distribute")
      import :: c_int, c_ptr
      integer(c_int), value :: t, p
      integer(c_int), intent(in) :: formats(*), segments(*)
      type(c_ptr), value :: sizes
    end subroutine
    subroutine svm_redistribute_c(t, p, formats, segments, sizes) bind(C, name="svm_redistribute")
      import :: c_int, c_ptr
      integer(c_int), value :: t, p
      integer(c_int), intent(in) :: formats(*), segments(*)
      type(c_ptr), value :: sizes
    end subroutine
    subroutine svm_distribute_indirect(t, p, map) bind(C, name="svm_distribute_indirect")
      import :: c_int
      integer(c_int), value :: t, p
      integer(c_int), intent(in) :: map(*)
    end subroutine
    subroutine svm_distribute_linked(t, home, targets) bind(C, name="svm_distribute_linked")
      import :: c_int
      integer(c_int), value :: t, home
      integer(c_int), intent(in) :: targets(*)
    end subroutine
    integer(c_int) function svm_template_lbound(t, dim) bind(C, name="svm_template_lbound")
      import :: c_int
      integer(c_int), value :: t, dim
    end function
    integer(c_int) function svm_template_ubound(t, dim) bind(C, name="svm_template_ubound")
      import :: c_int
      integer(c_int), value :: t, dim
    end function
    integer(c_int) function svm_owner(t, coords) bind(C, name="svm_owner")
      import :: c_int
      integer(c_int), value :: t
      integer(c_int), intent(in) :: coords(*)
    end function
    integer(c_int) function svm_owns(t, coords) bind(C, name="svm_owns")
      import :: c_int
      integer(c_int), value :: t
      integer(c_int), intent(in) :: coords(*)
    end function
    integer(c_int) function svm_loop_begin_c(strategy, ndims, lo, hi, chunk, t, offsets) bind(C, name="svm_loop_begin")
      import :: c_int, c_ptr
      integer(c_int), value :: strategy, ndims, chunk, t
      integer(c_int), intent(in) :: lo(*), hi(*)
      type(c_ptr), value :: offsets
    end function
    integer(c_int) function svm_loop_next_c(h, lo, hi) bind(C, name="svm_loop_next")
      import :: c_int
      integer(c_int), value :: h
      integer(c_int), intent(out) :: lo(*), hi(*)
    end function
    subroutine svm_critical_begin_c(name, namelen) bind(C, name="svm_critical_begin")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: namelen
    end subroutine
    subroutine svm_critical_end_c(name, namelen) bind(C, name="svm_critical_end")
      import :: c_int, c_char
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: namelen
    end subroutine
    subroutine svm_page_lock(p, size) bind(C, name="svm_page_lock")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t), value :: size
    end subroutine
    subroutine svm_page_unlock(p, size) bind(C, name="svm_page_unlock")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: p
      integer(c_size_t), value :: size
    end subroutine
    type(c_ptr) function svm_shared_alloc(size) bind(C, name="svm_shared_alloc")
      import :: c_ptr, c_size_t
      integer(c_size_t), value :: size
    end function
    subroutine svm_shared_free(p) bind(C, name="svm_shared_free")
      import :: c_ptr
      type(c_ptr), value :: p
    end subroutine
    type(c_ptr) function svm_common_c(name, namelen, size) bind(C, name="svm_common")
      import :: c_ptr, c_int, c_char, c_size_t
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: namelen
      integer(c_size_t), value :: size
    end function
    subroutine svm_commons_free() bind(C, name="svm_commons_free")
    end subroutine
  end interface

contains

  ! The message of the last failed native call ('' when none failed).
  function svm_error_message() result(msg)
    character(len=:), allocatable :: msg
    character(kind=c_char) :: buf(512)
    integer(c_size_t) :: n
    integer :: i, k
    n = svm_last_error_c(buf, int(size(buf), c_size_t))
    k = int(min(n, int(size(buf) - 1, c_size_t)))
    allocate(character(len=k) :: msg)
    do i = 1, k
      msg(i:i) = buf(i)
    end do
  end function

  ! Stop with the last error's message when a native call returned rc /= 0.
  subroutine svm_check(rc, what)
    integer(c_int), intent(in) :: rc
    character(len=*), intent(in) :: what
    if (rc /= 0) then
      write (0, '(a, ": ", a)') what, svm_error_message()
      error stop 1
    end if
  end subroutine

  ! The address of p as an integer, for a Cray pointer.
  integer(c_intptr_t) function svm_address(p)
    type(c_ptr), intent(in) :: p
    svm_address = transfer(p, svm_address)
  end function

  ! The C pointer of an address held in a Cray pointer.
  type(c_ptr) function svm_pointer(addr)
    integer(c_intptr_t), intent(in) :: addr
    svm_pointer = transfer(addr, svm_pointer)
  end function

  ! PROCESSORS name(extents): the arrangement's handle.
  integer function svm_processors(name, extents)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: extents(:)
    svm_processors = svm_processors_c(name, len(name), size(extents), extents)
  end function

  ! TEMPLATE name(:, ...) of the given rank, empty: the template's handle.
  integer function svm_template(name, rank)
    character(len=*), intent(in) :: name
    integer(c_int), intent(in) :: rank
    svm_template = svm_template_c(name, len(name), rank)
  end function

  ! DISTRIBUTE t onto p: formats (and CYCLIC segments) per dimension; sizes
  ! of the GENERAL_BLOCK dimensions, if any.
  subroutine svm_distribute(t, p, formats, segments, sizes)
    integer(c_int), intent(in) :: t, p, formats(:), segments(:)
    integer(c_int), intent(in), optional, target :: sizes(:)
    if (present(sizes)) then
      call svm_distribute_c(t, p, formats, segments, c_loc(sizes))
    else
      call svm_distribute_c(t, p, formats, segments, c_null_ptr)
    end if
  end subroutine

  ! REDISTRIBUTE t onto p, anywhere in the program.
  subroutine svm_redistribute(t, p, formats, segments, sizes)
    integer(c_int), intent(in) :: t, p, formats(:), segments(:)
    integer(c_int), intent(in), optional, target :: sizes(:)
    if (present(sizes)) then
      call svm_redistribute_c(t, p, formats, segments, c_loc(sizes))
    else
      call svm_redistribute_c(t, p, formats, segments, c_null_ptr)
    end if
  end subroutine

  ! A parallel section construct of n sections, on sizes(s) processors each
  ! if given; then DO WHILE (svm_section_next() /= 0).
  subroutine svm_sections_begin(n, sizes)
    integer(c_int), intent(in) :: n
    integer(c_int), intent(in), optional :: sizes(:)
    integer(c_int) :: none(1)
    if (present(sizes)) then
      call svm_sections_begin_c(n, sizes, size(sizes))
    else
      none = 0
      call svm_sections_begin_c(n, none, 0)
    end if
  end subroutine

  ! Start a parallel loop over lo(d):hi(d) per dimension (innermost first):
  ! its handle, for DO WHILE (svm_loop_next(h, blo, bhi)).
  integer function svm_loop_begin(strategy, lo, hi, chunk, t, offsets)
    integer(c_int), intent(in) :: strategy, lo(:), hi(:)
    integer(c_int), intent(in), optional :: chunk, t
    integer(c_int), intent(in), optional, target :: offsets(:)
    integer(c_int) :: c, tt
    type(c_ptr) :: off
    c = 0
    tt = 0
    off = c_null_ptr
    if (present(chunk)) c = chunk
    if (present(t)) tt = t
    if (present(offsets)) off = c_loc(offsets)
    if (size(lo) /= size(hi)) call svm_stop('svm_loop_begin: lo and hi have different sizes')
    svm_loop_begin = svm_loop_begin_c(strategy, size(lo), lo, hi, c, tt, off)
  end function

  ! This rank's next box of the loop's iterations; .false. at the end of the
  ! loop (after a barrier over the processor set).
  logical function svm_loop_next(h, lo, hi)
    integer(c_int), intent(in) :: h
    integer(c_int), intent(out) :: lo(:), hi(:)
    svm_loop_next = svm_loop_next_c(h, lo, hi) /= 0
  end function

  subroutine svm_critical_begin(name)
    character(len=*), intent(in) :: name
    call svm_critical_begin_c(name, len(name))
  end subroutine

  subroutine svm_critical_end(name)
    character(len=*), intent(in) :: name
    call svm_critical_end_c(name, len(name))
  end subroutine

  ! COMMON /name/ of size bytes, shared, allocated when first named.
  type(c_ptr) function svm_common(name, size)
    character(len=*), intent(in) :: name
    integer(c_size_t), intent(in) :: size
    svm_common = svm_common_c(name, len(name), size)
  end function

  subroutine svm_stop(msg)
    character(len=*), intent(in) :: msg
    write (0, '(a)') msg
    error stop 1
  end subroutine
end module svm
