package state

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
)

// What can be wrong with a state file at open. A *FileError matches one of them with errors.Is.
var (
	// ErrCorrupt: the file is not a state file, or its pages do not check.
	ErrCorrupt = errors.New("state file is corrupt")
	// ErrTooNew: the file was written in a format newer than this binary reads.
	ErrTooNew = errors.New("state file is from a newer version")
	// ErrUnwritable: the file or its directory cannot be written (permissions, a read-only or full file
	// system).
	ErrUnwritable = errors.New("state file cannot be written")
	// ErrLocked: another process holds the file's lock (another bridge on the same file).
	ErrLocked = errors.New("state file is locked by another process")
	// ErrWrongKey: the records were sealed under another key than the one given (Sealed's canary does
	// not open).
	ErrWrongKey = errors.New("state key does not open the store")
	// ErrNoKey: the file exists but the key file generated beside it is gone.
	ErrNoKey = errors.New("state key file is missing")
)

// resetHint ends the messages of the problems that starting over (FileOptions.Reset, --state-reset)
// solves.
const resetHint = "start over with --state-reset (the file is kept as <file>.bad-<time>)"

// FileError is a state file that cannot be used: what is wrong (one of ErrCorrupt, ErrTooNew,
// ErrUnwritable, ErrLocked, ErrWrongKey, ErrNoKey, or nil for another failure) and the underlying error.
// Error() is one line naming the file and what is wrong; the binary prints it and exits with status 2.
type FileError struct {
	// Path is the state file.
	Path string
	// Problem is what is wrong: one of the Err… values above, or nil.
	Problem error
	// Detail says more, in lower case: the system's error, the versions, where the key came from.
	Detail string
	// Err is the underlying error, if any.
	Err error
}

func (e *FileError) Error() string {
	var msg string
	switch e.Problem {
	case ErrCorrupt:
		msg = fmt.Sprintf("state file %s is corrupt (%s): move it aside, or %s", e.Path, e.Detail, resetHint)
	case ErrTooNew:
		msg = fmt.Sprintf("state file %s was written by a newer mcp-bridge (%s): run that version, or %s", e.Path, e.Detail, resetHint)
	case ErrUnwritable:
		msg = fmt.Sprintf("state file %s cannot be written (%s)", e.Path, e.Detail)
	case ErrLocked:
		msg = fmt.Sprintf("state file %s is locked by another process (another mcp-bridge, e.g. `make run`?): stop it, or give this bridge a file of its own with --state-file or state.file (`make run STATE=other.db`)", e.Path)
	case ErrWrongKey:
		msg = fmt.Sprintf("state file %s does not open with the key from %s (sealed with another key): give its key, or %s", e.Path, e.Detail, resetHint)
	case ErrNoKey:
		msg = fmt.Sprintf("state file %s exists but its key file %s is missing: restore the key, or %s", e.Path, e.Detail, resetHint)
	default:
		msg = fmt.Sprintf("state file %s cannot be opened (%s)", e.Path, e.Detail)
	}
	return oneLine(msg)
}

// Unwrap returns the problem and the underlying error, for errors.Is and errors.As.
func (e *FileError) Unwrap() []error {
	var errs []error
	if e.Problem != nil {
		errs = append(errs, e.Problem)
	}
	if e.Err != nil {
		errs = append(errs, e.Err)
	}
	return errs
}

// fileError classifies err, an error of opening or first writing the file at path: permissions, a
// read-only or full file system are ErrUnwritable; anything else has no problem of its own.
func fileError(path string, err error) *FileError {
	var fe *FileError
	if errors.As(err, &fe) {
		return fe
	}
	e := &FileError{Path: path, Detail: systemDetail(err), Err: err}
	switch {
	case errors.Is(err, fs.ErrPermission), errors.Is(err, syscall.EROFS), errors.Is(err, syscall.ENOSPC),
		errors.Is(err, syscall.EDQUOT), errors.Is(err, syscall.ENOTDIR), errors.Is(err, syscall.EISDIR):
		e.Problem = ErrUnwritable
	}
	return e
}

// systemDetail is err without the path an *fs.PathError repeats: "permission denied".
func systemDetail(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
