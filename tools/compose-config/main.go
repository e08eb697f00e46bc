// Command compose-config validates Compose files with compose-go, the loader `docker compose config` is built
// on, and prints the resolved model as YAML, so tests can check temporal/docker-compose.yml without Docker.
//
// Usage: compose-config [-p project] -f compose.yml [-f override.yml ...]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/compose-spec/compose-go/v2/cli"
)

// fileList collects repeated -f flags.
type fileList []string

func (f *fileList) String() string { return strings.Join(*f, ",") }

func (f *fileList) Set(value string) error {
	*f = append(*f, value)
	return nil
}

func main() {
	var files fileList
	flag.Var(&files, "f", "Compose file (repeatable; default: compose.yaml and its usual names in the working directory)")
	project := flag.String("p", "", "project name (default: the `name:` of the file, else its directory name)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "compose-config: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if err := run(files, *project); err != nil {
		fmt.Fprintf(os.Stderr, "compose-config: %v\n", err)
		os.Exit(1)
	}
}

func run(files []string, projectName string) error {
	// The same options `docker compose config` loads with: environment and .env interpolation, relative paths
	// resolved against the file's directory, consistency checks (e.g. depends_on naming a real service).
	options, err := cli.NewProjectOptions(files,
		cli.WithName(projectName),
		cli.WithOsEnv,
		cli.WithDotEnv,
		cli.WithConfigFileEnv,
		cli.WithDefaultConfigPath,
		cli.WithResolvedPaths(true),
	)
	if err != nil {
		return err
	}
	model, err := options.LoadProject(context.Background())
	if err != nil {
		return err
	}
	out, err := model.WithoutUnnecessaryResources().MarshalYAML()
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(out)
	return err
}
