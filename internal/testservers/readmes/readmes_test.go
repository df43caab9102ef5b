package readmes

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/invoicing-api/invoicing-go/internal/testservers"
)

// The READMEs that run first, in this order; the others follow in path
// order.
var firstREADMEs = []string{"README.md", "cmd/invoicing/README.md", "pgmirror/README.md"}

const (
	blockTimeout = 5 * time.Minute // one foreground block
	readyTimeout = 2 * time.Minute // a background block's wait= condition
	stopTimeout  = 15 * time.Second
	repoURL      = "https://github.com/invoicing-api/invoicing-go"
)

func TestREADMECommands(t *testing.T) {
	root := strings.TrimSpace(run(t, "", nil, "git", "rev-parse", "--show-toplevel"))
	work := t.TempDir()
	src := filepath.Join(work, "src")
	copyTree(t, root, src)
	clone := filepath.Join(work, "invoicing-go")
	run(t, "", nil, "git", "clone", "-q", src, clone)

	pg, err := testservers.StartPostgres()
	require.NoError(t, err)
	defer pg.Close()
	env := userEnv(t, work, src, pg.URL)

	readmes := findREADMEs(t, clone)
	all := map[string][]block{}
	for _, rel := range readmes {
		all[rel] = parseBlocks(t, filepath.Join(clone, rel))
	}
	ports, _ := movePorts(t, all)
	env = append(env, envMockAddr+"=127.0.0.1:"+ports[mockPort])
	ran := 0
	for _, rel := range readmes {
		blocks := all[rel]
		if len(blocks) == 0 {
			continue
		}
		for i := range blocks {
			blocks[i] = ports.rewrite(blocks[i])
		}
		ok := t.Run(strings.ReplaceAll(rel, "/", "_"), func(t *testing.T) {
			s := newSession(t, work, clone, rel, env)
			defer s.stopBackground()
			for i, b := range blocks {
				s.run(i, b)
			}
		})
		if !ok {
			t.Fatalf("%s: a block failed (above); later READMEs were not run", rel)
		}
		ran += len(blocks)
	}
	require.Greater(t, ran, 10, "the READMEs show fewer blocks than expected: is the fence syntax still ```sh?")
}

// block is one fenced block of a README.
type block struct {
	line  int               // of the opening fence
	lang  string            // sh or sql
	attrs map[string]string // the fence's words after the language; a bare word maps to ""
	text  string
}

// knownAttrs are the fence words this test reads; any other is a mistake.
var knownAttrs = []string{"background", "wait", "app", "ci"}

// parseBlocks returns the shell and SQL blocks of a README, in order.
func parseBlocks(t *testing.T, path string) []block {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var blocks []block
	var cur *block
	var text []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			fields := strings.Fields(strings.TrimPrefix(line, "```"))
			b := &block{line: n, attrs: map[string]string{}}
			if len(fields) > 0 {
				b.lang = fields[0]
			}
			for _, f := range fields[min(1, len(fields)):] {
				k, v, _ := strings.Cut(f, "=")
				require.Contains(t, knownAttrs, k, "%s:%d: unknown fence word %q", path, n, f)
				b.attrs[k] = v
			}
			cur, text = b, nil
		case cur != nil && strings.TrimSpace(line) == "```":
			cur.text = strings.Join(text, "\n") + "\n"
			switch cur.lang {
			case "sh", "bash", "shell":
				cur.lang = "sh"
				blocks = append(blocks, *cur)
			case "sql":
				blocks = append(blocks, *cur)
			default:
				require.Empty(t, cur.attrs, "%s:%d: fence words on a %q block, which is not run", path, cur.line, cur.lang)
			}
			cur = nil
		case cur != nil:
			text = append(text, line)
		}
	}
	require.NoError(t, sc.Err())
	if cur != nil {
		t.Fatalf("%s: the block opened at line %d is not closed", path, cur.line)
	}
	return blocks
}

// session is the shell session a README's blocks run in.
type session struct {
	t          *testing.T
	work, root string // the work directory and the copy's root
	name       string // the README's path in the copy
	env        []string
	dir        string // the current directory
	state      string // the exported variables, as export -p writes them
	logs       string
	background []*background
	apps       int
}

// background is a process a background block started.
type background struct {
	cmd  *exec.Cmd
	log  string
	done chan struct{}
}

func newSession(t *testing.T, work, root, name string, env []string) *session {
	logs := filepath.Join(work, "logs", strings.ReplaceAll(name, "/", "_"))
	require.NoError(t, os.MkdirAll(logs, 0o755))
	state := filepath.Join(logs, "state.sh")
	require.NoError(t, os.WriteFile(state, nil, 0o644))
	return &session{t: t, work: work, root: root, name: name, env: env, dir: root, state: state, logs: logs}
}

// run runs block i.
func (s *session) run(i int, b block) {
	s.t.Helper()
	where := fmt.Sprintf("%s:%d", s.name, b.line)
	s.t.Logf("%s\n%s", where, b.text)
	switch {
	case b.lang == "sql":
		file := filepath.Join(s.logs, fmt.Sprintf("%02d.sql", i))
		require.NoError(s.t, os.WriteFile(file, []byte(b.text), 0o644))
		s.shell(where, i, s.dir, fmt.Sprintf("psql \"$DATABASE_URL\" -X -q -v ON_ERROR_STOP=1 -f %q\n", file), false)
	case hasAttr(b, "ci"):
		ci, err := os.ReadFile(filepath.Join(s.root, ".ci", "run"))
		require.NoError(s.t, err)
		lines := strings.Split(string(ci), "\n")
		for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
			require.Contains(s.t, trimAll(lines), strings.TrimSpace(l), "%s: .ci/run does not run %q", where, l)
		}
	case hasAttr(b, "background"):
		s.start(where, i, b)
	case hasAttr(b, "app"):
		s.app(where, i, b)
	default:
		s.shell(where, i, s.dir, b.text, true)
	}
}

// shell runs script in dir with the session's variables, and fails the
// test unless it exits 0. With keep, the variables it exports and the
// directory it ends in carry over to the next block.
func (s *session) shell(where string, i int, dir, script string, keep bool) {
	s.t.Helper()
	next := filepath.Join(s.logs, fmt.Sprintf("%02d", i))
	prologue := fmt.Sprintf("set -euo pipefail\n. %q\ncd %q\n", s.state, dir)
	if keep {
		prologue += fmt.Sprintf("trap 'export -p > %q; pwd > %q' EXIT\n", next+".state", next+".dir")
	}
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	log := next + ".log"
	cmd := s.command(ctx, prologue+script, log)
	err := cmd.Run()
	if err != nil {
		s.t.Fatalf("%s: the block failed (%v); its output:\n%s%s", where, err, tail(log), s.backgroundLogs())
	}
	s.t.Logf("%s: ok\n%s", where, tail(log))
	if keep {
		require.NoError(s.t, os.Rename(next+".state", s.state))
		d, err := os.ReadFile(next + ".dir")
		require.NoError(s.t, err)
		s.dir = strings.TrimSpace(string(d))
	}
}

// command is bash running script with the session's environment, in a
// process group of its own (so that everything it starts can be stopped),
// writing its output to log.
func (s *session) command(ctx context.Context, script, log string) *exec.Cmd {
	out, err := os.Create(log)
	require.NoError(s.t, err)
	s.t.Cleanup(func() { out.Close() })
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Env = s.env
	cmd.Stdin = nil
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// start starts a background block and waits for its wait= condition.
func (s *session) start(where string, i int, b block) {
	s.t.Helper()
	cond, ok := b.attrs["wait"]
	require.True(s.t, ok && cond != "", "%s: a background block needs wait=FILE or wait=HOST:PORT", where)
	log := filepath.Join(s.logs, fmt.Sprintf("%02d.log", i))
	script := fmt.Sprintf("set -euo pipefail\n. %q\ncd %q\n%s", s.state, s.dir, b.text)
	cmd := s.command(context.Background(), script, log)
	require.NoError(s.t, cmd.Start())
	bg := &background{cmd: cmd, log: log, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(bg.done) }()
	s.background = append(s.background, bg)

	ready := func() bool {
		if _, _, err := net.SplitHostPort(cond); err == nil && !strings.Contains(cond, "/") {
			c, err := net.DialTimeout("tcp", cond, time.Second)
			if err == nil {
				c.Close()
			}
			return err == nil
		}
		path := cond
		if !filepath.IsAbs(path) {
			path = filepath.Join(s.dir, path)
		}
		_, err := os.Stat(path)
		return err == nil
	}
	deadline := time.Now().Add(readyTimeout)
	for !ready() {
		select {
		case <-bg.done:
			s.t.Fatalf("%s: the background block exited (%v) before %s; its output:\n%s", where, cmd.ProcessState, cond, tail(log))
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: no %s after %s; the block's output:\n%s", where, cond, readyTimeout, tail(log))
		}
	}
	s.t.Logf("%s: started, %s ready", where, cond)
}

// app runs a block in a new Go module of the user's own that imports the
// packages app= names, then builds it.
func (s *session) app(where string, i int, b block) {
	s.t.Helper()
	s.apps++
	dir := filepath.Join(s.work, "apps", fmt.Sprintf("%s-%d", strings.ReplaceAll(s.name, "/", "_"), s.apps), "app")
	require.NoError(s.t, os.MkdirAll(dir, 0o755))
	var imports strings.Builder
	for _, p := range strings.Split(b.attrs["app"], ",") {
		fmt.Fprintf(&imports, "\t_ %q\n", p)
	}
	require.NoError(s.t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/app\n\ngo 1.26\n"), 0o644))
	require.NoError(s.t, os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nimport (\n"+imports.String()+")\n\nfunc main() {}\n"), 0o644))
	s.shell(where, i, dir, b.text, false)
	s.shell(where+" (go build ./... in the module)", i+100, dir, "go build ./...\n", false)
}

// stopBackground stops the background blocks, newest first: SIGTERM to
// their process groups, then SIGKILL.
func (s *session) stopBackground() {
	for _, bg := range slices.Backward(s.background) {
		_ = syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-bg.done:
		case <-time.After(stopTimeout):
			_ = syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGKILL)
			<-bg.done
		}
		// What the group left behind, if anything.
		_ = syscall.Kill(-bg.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// backgroundLogs returns the end of every background block's output, for a
// failure's message.
func (s *session) backgroundLogs() string {
	var b strings.Builder
	for _, bg := range s.background {
		fmt.Fprintf(&b, "\n--- background %s:\n%s", filepath.Base(bg.log), tail(bg.log))
	}
	return b.String()
}

func hasAttr(b block, name string) bool {
	_, ok := b.attrs[name]
	return ok
}

func trimAll(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = strings.TrimSpace(l)
	}
	return out
}

// tail returns the last 150 lines of the file at path.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 150 {
		lines = append([]string{"..."}, lines[len(lines)-150:]...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// findREADMEs returns the paths of the copy's README.md files, the
// firstREADMEs first.
func findREADMEs(t *testing.T, root string) []string {
	var all []string
	for _, f := range strings.Split(strings.TrimSpace(run(t, root, nil, "git", "ls-files", "README.md", "*/README.md")), "\n") {
		if f != "" {
			all = append(all, f)
		}
	}
	for _, f := range firstREADMEs {
		require.Contains(t, all, f)
	}
	rest := slices.DeleteFunc(slices.Clone(all), func(f string) bool { return slices.Contains(firstREADMEs, f) })
	slices.Sort(rest)
	return append(slices.Clone(firstREADMEs), rest...)
}

// copyTree makes dst a new git repository holding what a commit of root's
// working tree would: the tracked files and the untracked ones git does
// not ignore, as they are now.
func copyTree(t *testing.T, root, dst string) {
	out := run(t, root, nil, "git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	for _, rel := range strings.Split(strings.TrimRight(out, "\x00"), "\x00") {
		from := filepath.Join(root, rel)
		info, err := os.Lstat(from)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted, not yet committed
		}
		require.NoError(t, err)
		if !info.Mode().IsRegular() {
			continue
		}
		to := filepath.Join(dst, rel)
		require.NoError(t, os.MkdirAll(filepath.Dir(to), 0o755))
		copyFile(t, from, to, info.Mode().Perm())
	}
	git := []string{"-c", "user.name=readmes", "-c", "user.email=readmes@example.invalid", "-c", "commit.gpgsign=false"}
	run(t, dst, nil, "git", "init", "-q", "-b", "main")
	run(t, dst, nil, "git", "add", "-A")
	run(t, dst, nil, "git", append(git, "commit", "-q", "-m", "the working tree")...)
}

func copyFile(t *testing.T, from, to string, perm os.FileMode) {
	in, err := os.Open(from)
	require.NoError(t, err)
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	require.NoError(t, err)
	_, err = io.Copy(out, in)
	require.NoError(t, err)
	require.NoError(t, out.Close())
}

// userEnv is the environment of the blocks: the test's, without what a
// new user would not have set, with an empty HOME, a GOBIN on PATH, git
// confined to the copy and DATABASE_URL set.
func userEnv(t *testing.T, work, src, databaseURL string) []string {
	home := filepath.Join(work, "home")
	bin := filepath.Join(work, "bin")
	require.NoError(t, os.MkdirAll(home, 0o755))
	require.NoError(t, os.MkdirAll(bin, 0o755))
	gitconfig := filepath.Join(work, "gitconfig")
	require.NoError(t, os.WriteFile(gitconfig, []byte(fmt.Sprintf(
		"[url %q]\n\tinsteadOf = %s\n[user]\n\tname = readmes\n\temail = readmes@example.invalid\n[init]\n\tdefaultBranch = main\n",
		"file://"+src, repoURL)), 0o644))

	goEnv := strings.Fields(run(t, "", nil, "go", "env", "GOMODCACHE", "GOCACHE", "GOPATH"))
	require.Len(t, goEnv, 3)
	path := bin + string(os.PathListSeparator) + os.Getenv("PATH")
	if pgBin := postgresBin(); pgBin != "" {
		path += string(os.PathListSeparator) + pgBin
	}
	env := []string{
		"HOME=" + home, "GOBIN=" + bin, "PATH=" + path,
		"GOMODCACHE=" + goEnv[0], "GOCACHE=" + goEnv[1], "GOPATH=" + goEnv[2],
		"GIT_CONFIG_GLOBAL=" + gitconfig, "GIT_CONFIG_NOSYSTEM=1", "GIT_ALLOW_PROTOCOL=file",
		"DATABASE_URL=" + databaseURL,
	}
	drop := []string{"HOME=", "GOBIN=", "PATH=", "GOMODCACHE=", "GOCACHE=", "GOPATH=", "GOWORK=", "GIT_", "DATABASE_URL=", "INVOICING_", "PG"}
	for _, kv := range os.Environ() {
		if !slices.ContainsFunc(drop, func(p string) bool { return strings.HasPrefix(kv, p) }) {
			env = append(env, kv)
		}
	}
	return env
}

// postgresBin is where psql is when it is not on PATH: Debian keeps the
// server's programs under /usr/lib/postgresql/*/bin.
func postgresBin() string {
	if _, err := exec.LookPath("psql"); err == nil {
		return ""
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.Sort(dirs)
	for _, d := range slices.Backward(dirs) {
		if _, err := os.Stat(filepath.Join(d, "psql")); err == nil {
			return d
		}
	}
	return ""
}

// run runs a command of the test's own (not a README's) in dir and returns
// its output.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	return string(out)
}
