package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// A job's engine socket lives in a private directory that svmf run holds
// an flock on for as long as it lives. The kernel drops the lock when the
// process dies, however it dies, so the next svmf run of the same user can
// tell a directory left by a killed svmf (lock free: removed) from one in
// use (lock held: left alone).
const (
	jobDirPrefix = "svmf-job-"
	// newDirPrefix names a directory until it is locked: removeStale never
	// looks at it, so it cannot take a directory that is not locked yet
	// for a stale one.
	newDirPrefix = ".svmf-new-"
)

// jobDir removes this user's stale job directories, then makes a new one,
// locked. Close the returned file, after removing the directory, to
// release it.
func jobDir() (string, *os.File, error) {
	parent := os.Getenv("XDG_RUNTIME_DIR")
	if parent == "" {
		parent = os.TempDir()
	}
	removeStale(parent)
	tmp, err := os.MkdirTemp(parent, newDirPrefix)
	if err != nil {
		return "", nil, fmt.Errorf("engine socket directory: %w", err)
	}
	lock, err := os.Open(tmp)
	if err == nil {
		err = unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != nil {
			lock.Close()
		}
	}
	if err != nil {
		os.Remove(tmp)
		return "", nil, fmt.Errorf("engine socket directory: locking %s: %w", tmp, err)
	}
	dir := filepath.Join(parent, jobDirPrefix+strings.TrimPrefix(filepath.Base(tmp), newDirPrefix))
	// NOREPLACE: rename(2) would silently replace an empty directory of
	// that name.
	if err := unix.Renameat2(unix.AT_FDCWD, tmp, unix.AT_FDCWD, dir, unix.RENAME_NOREPLACE); err != nil {
		lock.Close()
		os.Remove(tmp)
		return "", nil, fmt.Errorf("engine socket directory: %w", err)
	}
	return dir, lock, nil
}

// removeStale removes the job directories in parent that belong to this
// user and that no live svmf holds.
func removeStale(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, jobDirPrefix+"*"))
	for _, dir := range dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || fi.Sys().(*syscall.Stat_t).Uid != uint32(os.Getuid()) {
			continue
		}
		f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW, 0)
		if err != nil {
			continue
		}
		if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) == nil {
			os.RemoveAll(dir)
		}
		f.Close()
	}
}
