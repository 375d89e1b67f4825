package mcpcore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// CheckCommands looks up the command of every configured stdio server as starting it would, and records a
// server whose command cannot be run as a failed open (ServerHealth, so /readyz says not_serving with the
// reason), so that an operator learns of a typo or a missing package when the bridge starts, not at the
// first CreateSession. It returns one error per such server, each naming the server and the command. The
// bridge still starts: the command may appear later (a package installed, a volume mounted), and the next
// session that opens replaces the recorded outcome.
func (c *Core) CheckCommands() []error {
	var errs []error
	for _, s := range c.Servers() {
		if s.Transport != TransportStdio || s.Command == "" {
			continue
		}
		if err := lookCommand(s.Command, s.Dir); err != nil {
			err = fmt.Errorf("server %q: %w", s.Name, err)
			c.noteOpen(s.Name, err)
			errs = append(errs, err)
		}
	}
	return errs
}

// lookCommand reports whether command can be started as startProcess starts it (exec.Command with Dir
// dir): a name without a slash is looked up on the bridge's $PATH (exec.Command resolves it before the
// server's env applies, so a PATH there does not change the lookup); a relative path is relative to dir. The error wraps ErrCommandNotFound and ErrUnavailable.
func lookCommand(command, dir string) error {
	notFound := func(why string) error {
		return fmt.Errorf("%w: %w: %q %s", ErrUnavailable, ErrCommandNotFound, command, why)
	}
	if !strings.Contains(command, "/") {
		if _, err := exec.LookPath(command); err != nil {
			if errors.Is(err, exec.ErrNotFound) {
				return notFound("is not on $PATH (" + os.Getenv("PATH") + ")")
			}
			return notFound(err.Error())
		}
		return nil
	}
	path := command
	if !filepath.IsAbs(path) && dir != "" {
		path = filepath.Join(dir, path)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound("does not exist")
	case err != nil:
		return notFound(err.Error())
	case fi.IsDir():
		return notFound("is a directory")
	case fi.Mode()&0o111 == 0:
		return notFound("is not executable")
	}
	return nil
}
