! Templates and ON_HOME loops: a shared array (a Cray pointer) and a 2-D
! one (C_F_POINTER) are computed by loops scheduled over templates that are
! distributed and redistributed BLOCK, CYCLIC, GENERAL_BLOCK, indirectly and
! linked; the master checks every element against a sequential run.
program templates
  use svm
  implicit none
  integer, parameter :: n = 1000, m = 48
  integer(c_intptr_t) :: pa
  integer(8) :: a(n)
  pointer (pa, a)
  integer(8), pointer :: b(:, :)
  integer(8) :: seq(n), seqb(m, m)
  integer :: np, p, p2, t, t2, tl, h, i, j, k, lo(2), hi(2), bad
  integer, allocatable :: map(:), sizes(:), targets(:)

  call svm_check(svm_init(), 'svm_init')
  np = numproc()
  p = svm_processors('P', [np])
  t = svm_template('T', 1)
  call svm_template_create(t, [1], [n])
  pa = svm_address(svm_shared_alloc(int(8 * n, c_size_t)))
  call c_f_pointer(svm_shared_alloc(int(8 * m * m, c_size_t)), b, [m, m])

  ! BLOCK, then CYCLIC(7) by redistribution.
  call svm_distribute(t, p, [SVM_BLOCK], [0])
  h = svm_loop_begin(SVM_SCHED_ON_HOME, [1], [n], t=t)
  do while (svm_loop_next(h, lo(1:1), hi(1:1)))
    do i = lo(1), hi(1)
      a(i) = i
    end do
  end do
  call svm_redistribute(t, p, [SVM_CYCLIC], [7])
  h = svm_loop_begin(SVM_SCHED_ON_HOME, [1], [n], t=t)
  do while (svm_loop_next(h, lo(1:1), hi(1:1)))
    do i = lo(1), hi(1)
      a(i) = 2 * a(i) + 1
    end do
  end do

  ! GENERAL_BLOCK: the last processor takes the most.
  allocate(sizes(np))
  sizes = n / (2 * np)
  sizes(np) = n - sum(sizes(1:np - 1))
  call svm_redistribute(t, p, [SVM_GENERAL_BLOCK], [0], sizes)
  h = svm_loop_begin(SVM_SCHED_ON_HOME, [1], [n - 1], t=t, offsets=[1])  ! ON_HOME(T(I+1))
  do while (svm_loop_next(h, lo(1:1), hi(1:1)))
    do i = lo(1), hi(1)
      a(i + 1) = a(i + 1) + 3
    end do
  end do

  ! Indirect: element i on processor MAP(i); the owner test agrees.
  allocate(map(n))
  do i = 1, n
    map(i) = mod(i * 7, np) + 1
  end do
  call svm_distribute_indirect(t, p, map)
  do i = 1, n
    if (svm_owner(t, [i]) /= map(i) - 1) then
      write (0, *) 'owner of T(', i, ') is', svm_owner(t, [i]), ', MAP says', map(i) - 1
      error stop 1
    end if
  end do
  h = svm_loop_begin(SVM_SCHED_ON_HOME, [1], [n], t=t)
  do while (svm_loop_next(h, lo(1:1), hi(1:1)))
    do i = lo(1), hi(1)
      a(i) = a(i) - i
    end do
  end do

  ! Linked: TL(I) lives where T(2*I) does.
  tl = svm_template('TL', 1)
  call svm_template_create(tl, [1], [n / 2])
  allocate(targets(n / 2))
  targets = [(2 * i, i = 1, n / 2)]
  call svm_distribute_linked(tl, t, targets)
  h = svm_loop_begin(SVM_SCHED_ON_HOME, [1], [n / 2], t=tl)
  do while (svm_loop_next(h, lo(1:1), hi(1:1)))
    do i = lo(1), hi(1)
      if (svm_owns(t, [2 * i]) == 0) then
        write (0, *) 'TL(', i, ') ran away from the owner of T(', 2 * i, ')'
        error stop 1
      end if
      a(2 * i) = a(2 * i) * 3
    end do
  end do

  ! 2-D: T2(m, m) distributed (BLOCK, CYCLIC(3)) onto P2(r, np/r).
  k = 1
  if (mod(np, 2) == 0) k = 2
  p2 = svm_processors('P2', [k, np / k])
  t2 = svm_template('T2', 2)
  call svm_template_create(t2, [1, 1], [m, m])
  call svm_distribute(t2, p2, [SVM_BLOCK, SVM_CYCLIC], [0, 3])
  h = svm_loop_begin(SVM_SCHED_ON_HOME, [1, 1], [m, m], t=t2)
  do while (svm_loop_next(h, lo, hi))
    do j = lo(2), hi(2)
      do i = lo(1), hi(1)
        b(i, j) = i * 1000 + j
      end do
    end do
  end do
  ! Redistributed (*, BLOCK) onto the 1-D P: whole columns.
  call svm_redistribute(t2, p, [SVM_COLLAPSED, SVM_BLOCK], [0, 0])
  h = svm_loop_begin(SVM_SCHED_ON_HOME, [1, 1], [m, m], t=t2)
  do while (svm_loop_next(h, lo, hi))
    if (lo(1) /= 1 .or. hi(1) /= m) then
      write (0, *) 'a collapsed dimension was split:', lo(1), hi(1)
      error stop 1
    end if
    do j = lo(2), hi(2)
      do i = lo(1), hi(1)
        b(i, j) = b(i, j) + a(i + j)
      end do
    end do
  end do

  if (myprocset() == 0) then
    seq = [(int(i, 8), i = 1, n)]
    seq = 2 * seq + 1
    seq(2:n) = seq(2:n) + 3
    seq = seq - [(int(i, 8), i = 1, n)]
    seq(2:n:2) = seq(2:n:2) * 3
    do j = 1, m
      do i = 1, m
        seqb(i, j) = i * 1000 + j + seq(i + j)
      end do
    end do
    bad = count(a /= seq) + count(b /= seqb)
    if (bad /= 0) then
      write (0, *) bad, ' elements differ from the sequential run'
      error stop 1
    end if
    write (*, '(a, i0, a, i0)') 'templates ok: ', np, ' ranks, checksum ', sum(a) + sum(b)
  end if
  call svm_check(svm_finalize(), 'svm_finalize')
end program
