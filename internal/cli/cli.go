// Package cli is the command-line convention svmf, its subcommands and svmd
// share: -h and --help print the usage on standard output and succeed; a
// mistake is one line that names it and the way to the usage, with status
// 2; the version comes from the build information Go stamps into the
// binary. It only parses and prints: it never exits or runs anything.
package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
)

// ErrHelp is returned by Parse after it printed the usage for -h or
// --help: the caller ends with status 0.
var ErrHelp = flag.ErrHelp

// Parse parses args with fs. For -h or --help it prints usage (fs.Usage
// writes to fs.Output, which Parse points at stdout) and returns ErrHelp;
// for a flag it does not know or a bad value it returns the flag package's
// one-line message and where the flags are listed, printing nothing.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	usage := fs.Usage
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(stdout)
	switch {
	case err == flag.ErrHelp:
		fs.Usage()
		return ErrHelp
	case err != nil:
		return fmt.Errorf("%w (%s -h lists the flags)", err, fs.Name())
	}
	return nil
}

// IsHelp reports whether args ask for help: their first is -h, -help or
// --help.
func IsHelp(args []string) bool {
	return len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help")
}

// Version describes the running binary: the program's name, its module's
// path and version, and the VCS revision it was built from ("modified" when
// the work tree had changes), as far as the build recorded them.
func Version(program string) string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return program + " (no build information)"
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	var vcs []string
	if rev := settings["vcs.revision"]; rev != "" {
		vcs = append(vcs, "revision "+rev)
	} else {
		vcs = append(vcs, "revision unknown (built without version control information)")
	}
	if t := settings["vcs.time"]; t != "" {
		vcs = append(vcs, t)
	}
	if settings["vcs.modified"] == "true" {
		vcs = append(vcs, "modified")
	}
	return fmt.Sprintf("%s %s %s (%s), %s", program, info.Main.Path, info.Main.Version, strings.Join(vcs, ", "), info.GoVersion)
}
