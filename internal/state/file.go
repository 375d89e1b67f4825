package state

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
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
//
// Writes go through one writer goroutine that commits every write queued while the previous commit ran in
// one transaction (group commit): a lone write costs one transaction and one fsync as before, and many
// concurrent writers share the fsyncs instead of queueing for one each. Reads run in their own read-only
// transactions, concurrently with the writer.
type fileStore struct {
	db     *bolt.DB
	path   string
	noSync bool

	mu      sync.RWMutex // guards closed; held shared while a write is queued, so Close sees every queued write
	closed  bool
	writes  chan *writeOp // to the writer; buffered
	closing chan struct{} // closed by Close: the writer commits what is queued and ends
	done    chan struct{} // closed when the writer has ended

	closeOnce sync.Once
	closeErr  error
}

// writeOp is one queued Put or Delete and its outcome.
type writeOp struct {
	kind   Kind
	key    string
	value  []byte // nil: delete
	result chan error
}

// maxBatch bounds the writes committed in one transaction.
const maxBatch = 256

// syncInterval is how often a store with NoSync syncs what it wrote.
const syncInterval = time.Second

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
	// bbolt maps the file: a damaged page that points past its end faults (SIGBUS) when read. Here, while
	// the file is opened and checked, such a fault is a panic that openBolt and checkFile recover.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
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
	fs := &fileStore{
		db: db, path: path, noSync: opts.NoSync,
		writes: make(chan *writeOp, maxBatch), closing: make(chan struct{}), done: make(chan struct{}),
	}
	go fs.writer()
	return fs, nil
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

// checkFile checks the layout and format version of an open file, writing them into a new one, and reads
// every page in use.
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
		// Read every key and value, so every page in use: a damaged page is a panic (or, past the end of the
		// file, a fault) recovered above. bbolt's own tx.Check is not used: on a damaged overflow count it
		// loops for minutes, growing a map, in a goroutine of its own that cannot be stopped. Damage the walk
		// does not see cannot pass as data either: every value is authenticated (AES-GCM, Sealed).
		if err := walkBucket(tx.Cursor(), 0); err != nil {
			return &FileError{Path: path, Problem: ErrCorrupt, Detail: err.Error(), Err: err}
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

// walkBucket reads every key and value under c, nested buckets included, so that every page of the file is
// read once.
func walkBucket(c *bolt.Cursor, depth int) error {
	if depth > 8 {
		return errors.New("buckets nested too deep")
	}
	for k, v := c.First(); k != nil; k, v = c.Next() {
		_ = crc32.ChecksumIEEE(k)
		if v != nil {
			_ = crc32.ChecksumIEEE(v)
			continue
		}
		b := c.Bucket().Bucket(k)
		if b == nil {
			return fmt.Errorf("key %q has no value and is no bucket", k)
		}
		if err := walkBucket(b.Cursor(), depth+1); err != nil {
			return err
		}
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
	if value == nil {
		value = []byte{}
	}
	return s.write(ctx, kind, key, value)
}

func (s *fileStore) Delete(ctx context.Context, kind Kind, key string) error {
	return s.write(ctx, kind, key, nil)
}

// write queues a Put (value not nil) or Delete for the writer and waits for its commit. A write that ctx
// ends before it is queued is not made; once queued, it is waited for (a commit is not interruptible).
func (s *fileStore) write(ctx context.Context, kind Kind, key string, value []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRecord(kind, key); err != nil {
		return err
	}
	op := &writeOp{kind: kind, key: key, value: value, result: make(chan error, 1)}
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return ErrClosed
	}
	select {
	case s.writes <- op:
	case <-ctx.Done():
		s.mu.RUnlock()
		return ctx.Err()
	}
	s.mu.RUnlock()
	what := "writing"
	if value == nil {
		what = "deleting"
	}
	return s.opError(what, kind, key, <-op.result)
}

// writer commits the queued writes, each batch in one transaction, until Close; it then commits what is
// still queued and ends. With NoSync it also syncs the file every syncInterval when something was written.
func (s *fileStore) writer() {
	defer close(s.done)
	var tick <-chan time.Time
	if s.noSync {
		t := time.NewTicker(syncInterval)
		defer t.Stop()
		tick = t.C
	}
	dirty := false
	batch := make([]*writeOp, 0, maxBatch)
	for {
		select {
		case op := <-s.writes:
			batch = append(batch[:0], op)
		fill:
			for len(batch) < maxBatch {
				select {
				case op := <-s.writes:
					batch = append(batch, op)
				default:
					break fill
				}
			}
			s.commit(batch)
			dirty = true
		case <-tick:
			if dirty {
				_ = s.db.Sync()
				dirty = false
			}
		case <-s.closing:
			// No write is queued after closing (Close holds mu): drain what is.
			for {
				select {
				case op := <-s.writes:
					s.commit([]*writeOp{op})
				default:
					return
				}
			}
		}
	}
}

// commit applies a batch of writes in one transaction and tells each its outcome: its own error (an
// invalid record) or the commit's.
func (s *fileStore) commit(batch []*writeOp) {
	errs := make([]error, len(batch))
	err := s.db.Update(func(tx *bolt.Tx) error {
		changed := false
		records := tx.Bucket(bucketRecords)
		for i, op := range batch {
			if op.value == nil {
				b := records.Bucket([]byte(op.kind))
				if b == nil || b.Get([]byte(op.key)) == nil {
					continue // nothing to delete
				}
				errs[i] = b.Delete([]byte(op.key))
			} else {
				b, err := records.CreateBucketIfNotExists([]byte(op.kind))
				if err != nil {
					errs[i] = err
					continue
				}
				errs[i] = b.Put([]byte(op.key), op.value)
			}
			changed = changed || errs[i] == nil
		}
		if !changed {
			return errNothing // no write, no sync
		}
		return nil
	})
	if errors.Is(err, errNothing) {
		err = nil
	}
	for i, op := range batch {
		if errs[i] == nil {
			errs[i] = err
		}
		op.result <- errs[i]
	}
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

// Close commits the writes already queued, stops the writer and closes the file (releasing its lock).
func (s *fileStore) Close() error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.closing)
		<-s.done
		s.closeErr = s.db.Close()
	})
	return s.closeErr
}
