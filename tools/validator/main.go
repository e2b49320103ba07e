package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// KubernetesVersion is the version of k8s.io/kubernetes this program was built from (go.mod pins it).
func KubernetesVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == "k8s.io/kubernetes" {
				return dep.Version
			}
		}
	}
	return "unknown"
}

// main, as a command (native, or GOOS=wasip1 without -buildmode=c-shared): `--version` prints the
// Kubernetes version; otherwise stdin is a JSON array of objects and stdout the JSON array of results.
// The shipped WebAssembly is a reactor (exports.go) and never runs main.
func main() {
	if len(os.Args) > 1 && os.Args[1] == "--version" {
		fmt.Println(KubernetesVersion())
		return
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cannot read stdin:", err)
		os.Exit(1)
	}
	os.Stdout.Write(ValidateAll(input))
	os.Stdout.Write([]byte("\n"))
}
