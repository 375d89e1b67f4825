package state

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// envKillChild makes the test binary the child of TestFileSurvivesKill: it writes records to the file the
// variable names and prints each key once its Put returned.
const envKillChild = "STATE_TEST_KILL_CHILD"

func init() {
	path := os.Getenv(envKillChild)
	if path == "" {
		return
	}
	s, err := Open(context.Background(), Config{File: path, NoSync: os.Getenv("STATE_TEST_NOSYNC") == "1"}, quiet)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	for i := 0; ; i++ {
		key := strconv.Itoa(i)
		if err := s.Put(context.Background(), KindRequest, key, []byte("answer "+key)); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		fmt.Println(key)
	}
}

// TestFileSurvivesKill: every record whose Put returned is there after a kill -9 of the process that wrote
// it, with or without fsync, and the file opens cleanly.
func TestFileSurvivesKill(t *testing.T) {
	for _, noSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("nosync=%v", noSync), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "state.db")
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), envKillChild+"="+path)
			if noSync {
				cmd.Env = append(cmd.Env, "STATE_TEST_NOSYNC=1")
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			sc := bufio.NewScanner(out)
			confirmed := -1
			for sc.Scan() {
				n, err := strconv.Atoi(sc.Text())
				if err != nil {
					t.Fatalf("child: %s", sc.Text())
				}
				if confirmed = n; n == 30 {
					break
				}
			}
			_ = cmd.Process.Kill() // SIGKILL, with writes in flight
			_ = cmd.Wait()
			if confirmed < 30 {
				t.Fatalf("the child confirmed %d writes", confirmed+1)
			}
			s, err := Open(context.Background(), Config{File: path}, quiet)
			if err != nil {
				t.Fatalf("Open after kill -9: %v", err)
			}
			defer s.Close()
			for i := 0; i <= confirmed; i++ {
				key := strconv.Itoa(i)
				if v, err := s.Get(context.Background(), KindRequest, key); err != nil || string(v) != "answer "+key {
					t.Errorf("record %s after kill -9 = %q, %v", key, v, err)
				}
			}
		})
	}
}

// TestFileCloseWithWritesInFlight: a write racing Close either succeeds — and is then in the file — or
// fails with ErrClosed; nothing hangs.
func TestFileCloseWithWritesInFlight(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := OpenFile(path, FileOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		ok      []string
		once    sync.Once
		writing = make(chan struct{}) // closed at the first write that succeeded
	)
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				key := fmt.Sprintf("%d-%d", w, i)
				err := s.Put(context.Background(), KindCall, key, []byte("x"))
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				ok = append(ok, key)
				mu.Unlock()
				once.Do(func() { close(writing) })
			}
		})
	}
	<-writing
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	s, err = OpenFile(path, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, key := range ok {
		if _, err := s.Get(context.Background(), KindCall, key); err != nil {
			t.Errorf("record %s written before Close: %v", key, err)
		}
	}
	if len(ok) == 0 {
		t.Error("no write succeeded before Close")
	}
}
