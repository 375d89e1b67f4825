package state

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// FormatVersion is the version of the state file's layout that this binary writes and the newest it reads.
// A file of a newer version is refused (ErrTooNew), never rewritten.
const FormatVersion = 1

// The file's layout (docs/adr/0020-state-store.md): bucket "meta" holds "format" (FormatVersion in
// decimal); bucket "records" holds one bucket per Kind, each of key → value.
var (
	bucketMeta    = []byte("meta")
	bucketRecords = []byte("records")
	keyFormat     = []byte("format")
)

// DefaultLockTimeout is how long OpenFile waits for another process to release the file's lock.
const DefaultLockTimeout = time.Second

// FileOptions configure OpenFile. The zero value is usable.
type FileOptions struct {
	// LockTimeout bounds the wait for the file's lock, held by another process that has the file open;
	// then OpenFile fails with ErrLocked. Zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// Reset starts over: an existing file (whatever its state, unless it is locked) is renamed to
	// "<path>.bad-<UTC time>" and an empty store is created. Without Reset, a file that cannot be used is
	// an error, never replaced.
	Reset bool
	// Logger is told of a reset; nil means slog.Default().
	Logger *slog.Logger
	// NoSync skips the fsync of each write. A Put that returned is still in the kernel's hands, so it
	// survives the end of the process (kill -9, an OOM kill, a crash), but not a power cut or a crash of
	// the machine — which may also leave a file that only a Reset opens again. A write then costs tens of
	// microseconds instead of one fsync of the disk (docs/adr/0020-state-store.md has both figures).
	NoSync bool

	// maxSize, when positive, caps the file's size: a write that would grow it further fails as on a
	// full disk (tests).
	maxSize int
}

// fileStore is the embedded engine: one bbolt file on local disk.
type fileStore struct {
	db   *bolt.DB
	path string

	closeOnce sync.Once
	closeErr  error
}

// OpenFile opens the state file at path, creating it (and its directory, mode 0700) when missing, and
// returns its store. The file is a bbolt database (mode 0600) holding an exclusive lock while open: one
// process at a time. Every Put and Delete is one transaction, synced to disk before it returns.
//
// A file that cannot be used is a *FileError whose Error() is one line naming the file and what is wrong:
// ErrCorrupt (not a state file, or its pages do not check), ErrTooNew (a newer FormatVersion),
// ErrUnwritable (permissions, a read-only or full file system), ErrLocked (another process holds it
// longer than opts.LockTimeout). opts.Reset moves such a file aside and starts empty — except a locked
// one.
//
// OpenFile checks the whole file (every page) before it returns, so it costs a read of the file.
func OpenFile(path string, opts FileOptions) (Store, error) {
	if path == "" {
		return nil, errors.New("state: empty file path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fileError(path, err)
	}
	path = abs
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = DefaultLockTimeout
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if opts.Reset {
		aside, err := moveAside(path, opts.LockTimeout)
		if err != nil {
			return nil, err
		}
		if aside != "" {
			logger.Warn("state: started over: the old state file was moved aside", "file", path, "moved_to", aside)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fileError(path, err)
	}
	_, statErr := os.Stat(path)
	created := errors.Is(statErr, os.ErrNotExist)
	db, err := openBolt(path, &bolt.Options{Timeout: opts.LockTimeout, MaxSize: opts.maxSize, FreelistType: bolt.FreelistMapType, NoSync: opts.NoSync})
	if err != nil {
		return nil, err
	}
	if created {
		syncDir(filepath.Dir(path)) // the new file's name survives a power cut too
	}
	if err := checkFile(db, path); err != nil {
		_ = db.Close()
		return nil, err
	}
	return &fileStore{db: db, path: path}, nil
}

// openBolt opens the bbolt file, turning its errors (and the panics some damaged files cause) into
// *FileError.
func openBolt(path string, o *bolt.Options) (db *bolt.DB, err error) {
	defer func() {
		if r := recover(); r != nil {
			db, err = nil, &FileError{Path: path, Problem: ErrCorrupt, Detail: fmt.Sprint(r)}
		}
	}()
	db, err = bolt.Open(path, 0o600, o)
	switch {
	case err == nil:
		return db, nil
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, &FileError{Path: path, Problem: ErrLocked, Err: err}
	case errors.Is(err, bolterrors.ErrInvalid), errors.Is(err, bolterrors.ErrChecksum),
		errors.Is(err, bolterrors.ErrVersionMismatch), errors.Is(err, bolterrors.ErrInvalidMapping):
		return nil, &FileError{Path: path, Problem: ErrCorrupt, Detail: "not a state file", Err: err}
	}
	fe := fileError(path, err)
	if fe.Problem == nil && !errors.Is(err, os.ErrNotExist) {
		// bbolt reads the first page and fails with a bare message on a short or garbled file
		// ("file size too small", "invalid database"): not a state file.
		fe.Problem, fe.Detail = ErrCorrupt, "not a state file"
	}
	return nil, fe
}

// checkFile checks the layout and format version of an open file, writing them into a new one, and checks
// every page.
func checkFile(db *bolt.DB, path string) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &FileError{Path: path, Problem: ErrCorrupt, Detail: fmt.Sprint(r)}
		}
	}()
	fresh := false
	err = db.View(func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		if meta == nil {
			c := tx.Cursor()
			if k, _ := c.First(); k != nil {
				return &FileError{Path: path, Problem: ErrCorrupt, Detail: "not an mcp-bridge state file: no format version"}
			}
			fresh = true
			return nil
		}
		v := meta.Get(keyFormat)
		n, convErr := strconv.Atoi(string(v))
		switch {
		case v == nil || convErr != nil || n < 1:
			return &FileError{Path: path, Problem: ErrCorrupt, Detail: fmt.Sprintf("bad format version %q", v)}
		case n > FormatVersion:
			return &FileError{Path: path, Problem: ErrTooNew, Detail: fmt.Sprintf("format %d; this one reads up to %d", n, FormatVersion)}
		case tx.Bucket(bucketRecords) == nil:
			return &FileError{Path: path, Problem: ErrCorrupt, Detail: "no records bucket"}
		}
		for cerr := range tx.Check() {
			return &FileError{Path: path, Problem: ErrCorrupt, Detail: cerr.Error(), Err: cerr}
		}
		return nil
	})
	if err != nil || !fresh {
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket(bucketMeta)
		if err != nil {
			return err
		}
		if err := meta.Put(keyFormat, []byte(strconv.Itoa(FormatVersion))); err != nil {
			return err
		}
		_, err = tx.CreateBucket(bucketRecords)
		return err
	})
	if err != nil {
		return fileError(path, err)
	}
	return nil
}

// moveAside renames the file at path to "<path>.bad-<UTC time>" unless another process holds its lock,
// and returns the new name ("" when there was no file).
func moveAside(path string, timeout time.Duration) (string, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fileError(path, err)
	}
	defer f.Close()
	if err := lockFile(f, timeout); err != nil {
		return "", &FileError{Path: path, Problem: ErrLocked, Err: err}
	}
	aside := path + ".bad-" + time.Now().UTC().Format("20060102T150405.000Z")
	if err := os.Rename(path, aside); err != nil {
		return "", fileError(path, err)
	}
	syncDir(filepath.Dir(path))
	return aside, nil
}

// syncDir syncs a directory so that a file created or renamed in it survives a power cut. It is best
// effort: some file systems refuse to sync a directory.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

func (s *fileStore) Put(ctx context.Context, kind Kind, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	if value == nil {
		value = []byte{}
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.Bucket(bucketRecords).CreateBucketIfNotExists([]byte(kind))
		if err != nil {
			return err
		}
		return b.Put([]byte(key), value)
	})
	return s.opError("writing", kind, key, err)
}

func (s *fileStore) Delete(ctx context.Context, kind Kind, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	err := s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords).Bucket([]byte(kind))
		if b == nil || b.Get([]byte(key)) == nil {
			return errNothing // no write, no sync
		}
		return b.Delete([]byte(key))
	})
	if errors.Is(err, errNothing) {
		return nil
	}
	return s.opError("deleting", kind, key, err)
}

// errNothing rolls back a transaction that has nothing to write.
var errNothing = errors.New("nothing to do")

func (s *fileStore) Get(ctx context.Context, kind Kind, key string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkRecord(kind, key); err != nil {
		return nil, err
	}
	var v []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketRecords).Bucket([]byte(kind)); b != nil {
			if got := b.Get([]byte(key)); got != nil {
				v = slices.Clone(got)
				if v == nil {
					v = []byte{}
				}
				return nil
			}
		}
		return ErrNotFound
	})
	if errors.Is(err, ErrNotFound) {
		return nil, err
	}
	return v, s.opError("reading", kind, key, err)
}

func (s *fileStore) List(ctx context.Context, kind Kind, fn func(key string, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if kind == "" {
		return errors.New("state: empty kind")
	}
	var fnErr error
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords).Bucket([]byte(kind))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if v == nil {
				return nil // a nested bucket: none are written
			}
			if err := fn(string(k), v); err != nil {
				fnErr = err
				return err
			}
			return nil
		})
	})
	if fnErr != nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return s.opError("listing", kind, "", err)
}

// opError names the file and the record of a failed operation; nil stays nil and a closed database is
// ErrClosed.
func (s *fileStore) opError(op string, kind Kind, key string, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, bolterrors.ErrDatabaseNotOpen) {
		return ErrClosed
	}
	what := string(kind)
	if key != "" {
		what += "/" + key
	}
	return fmt.Errorf("state file %s: %s %s: %w", s.path, op, what, err)
}

func (s *fileStore) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.db.Close() })
	return s.closeErr
}
