// Command olm-validate runs Operator Framework's own bundle validators
// (github.com/operator-framework/api/pkg/validation, the version go.mod pins) over an OLM bundle
// directory and prints the results as one JSON document on stdout.
//
// It runs what `operator-sdk bundle validate DIR --select-optional suite=operatorframework` runs:
// the default bundle validators (ClusterServiceVersion, CustomResourceDefinition, Bundle) on the
// bundle's objects, then the optional operatorframework suite (OperatorHub v2, standard
// capabilities and categories, deprecated APIs, good practices) on all of its objects; plus the
// bundle-format check of metadata/annotations.yaml that operator-sdk takes from operator-registry.
// MultipleArchitecturesValidator is not run: it inspects the images in a registry.
//
// Usage: olm-validate [--k8s-version=1.35] BUNDLE_DIR
// Output: {"validatorVersion": "...", "results": [{"name", "errors": [...], "warnings": [...]}]}
// where each error or warning is {"type", "level", "field", "badValue", "detail", "message"}.
// Exit status: 0 when the validators ran (whatever they found), 2 on bad usage.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	apierrors "github.com/operator-framework/api/pkg/validation/errors"
	"sigs.k8s.io/yaml"
)

type finding struct {
	Type     string      `json:"type"`
	Level    string      `json:"level"`
	Field    string      `json:"field,omitempty"`
	BadValue interface{} `json:"badValue,omitempty"`
	Detail   string      `json:"detail,omitempty"`
	Message  string      `json:"message"`
}

type result struct {
	Name     string    `json:"name"`
	Errors   []finding `json:"errors"`
	Warnings []finding `json:"warnings"`
}

type report struct {
	ValidatorVersion string   `json:"validatorVersion"`
	Results          []result `json:"results"`
}

// Annotation keys a registry+v1 bundle's metadata/annotations.yaml must hold
// (operator-registry's bundle format, docs/design/operator-bundle.md).
var requiredAnnotations = []string{
	"operators.operatorframework.io.bundle.mediatype.v1",
	"operators.operatorframework.io.bundle.manifests.v1",
	"operators.operatorframework.io.bundle.metadata.v1",
	"operators.operatorframework.io.bundle.package.v1",
	"operators.operatorframework.io.bundle.channels.v1",
}

func main() {
	k8sVersion := flag.String("k8s-version", "", "Kubernetes version the bundle targets, for the deprecated-API and OperatorHub checks (optional)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: olm-validate [--k8s-version=1.35] BUNDLE_DIR")
		os.Exit(2)
	}
	dir := flag.Arg(0)
	out := report{ValidatorVersion: apiVersion()}
	out.Results = append(out.Results, formatResult(dir))

	bundle, err := apimanifests.GetBundleFromDir(dir)
	if err != nil {
		out.Results = append(out.Results, result{Name: "bundle load", Errors: []finding{toFinding(apierrors.ErrInvalidBundle(err.Error(), dir))}})
		emit(out)
		return
	}

	for _, r := range apivalidation.DefaultBundleValidators.Validate(bundle.ObjectsToValidate()...) {
		out.Results = append(out.Results, convert(r))
	}

	objs := bundle.ObjectsToValidate()
	for _, obj := range bundle.Objects {
		objs = append(objs, obj)
	}
	optional := map[string]string{}
	if *k8sVersion != "" {
		optional["k8s-version"] = *k8sVersion
	}
	objs = append(objs, optional)
	suite := []struct {
		name string
		run  func(...interface{}) []apierrors.ManifestResult
	}{
		{"operatorhub", apivalidation.OperatorHubV2Validator.Validate},
		{"standardcapabilities", apivalidation.StandardCapabilitiesValidator.Validate},
		{"standardcategories", apivalidation.StandardCategoriesValidator.Validate},
		{"alpha-deprecated-apis", apivalidation.AlphaDeprecatedAPIsValidator.Validate},
		{"good-practices", apivalidation.GoodPracticesValidator.Validate},
	}
	for _, v := range suite {
		for _, r := range v.run(objs...) {
			c := convert(r)
			c.Name = v.name + ": " + c.Name
			out.Results = append(out.Results, c)
		}
	}
	emit(out)
}

// formatResult checks metadata/annotations.yaml as operator-registry's ValidateBundleFormat does
// for a registry+v1 bundle: the file exists, parses, and names the required keys.
func formatResult(dir string) result {
	r := result{Name: "bundle format"}
	add := func(detail string) {
		r.Errors = append(r.Errors, toFinding(apierrors.ErrInvalidBundle(detail, "metadata/annotations.yaml")))
	}
	path := filepath.Join(dir, "metadata", "annotations.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		add(fmt.Sprintf("cannot read %s: %v", path, err))
		return r
	}
	var file struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(raw, &file); err != nil {
		add(fmt.Sprintf("cannot parse %s: %v", path, err))
		return r
	}
	for _, k := range requiredAnnotations {
		if file.Annotations[k] == "" {
			add(fmt.Sprintf("annotation %s is missing", k))
		}
	}
	if m := file.Annotations["operators.operatorframework.io.bundle.mediatype.v1"]; m != "" && m != "registry+v1" {
		add(fmt.Sprintf("mediatype %q is not registry+v1", m))
	}
	if m := file.Annotations["operators.operatorframework.io.bundle.manifests.v1"]; m != "" {
		if st, err := os.Stat(filepath.Join(dir, m)); err != nil || !st.IsDir() {
			add(fmt.Sprintf("manifests directory %q named by the annotations does not exist", m))
		}
	}
	return r
}

func convert(r apierrors.ManifestResult) result {
	c := result{Name: r.Name, Errors: []finding{}, Warnings: []finding{}}
	for _, e := range r.Errors {
		c.Errors = append(c.Errors, toFinding(e))
	}
	for _, e := range r.Warnings {
		c.Warnings = append(c.Warnings, toFinding(e))
	}
	return c
}

func toFinding(e apierrors.Error) finding {
	f := finding{Type: string(e.Type), Level: string(e.Level), Field: e.Field, Detail: e.Detail, Message: e.Error()}
	if e.BadValue != nil {
		if _, err := json.Marshal(e.BadValue); err == nil {
			f.BadValue = e.BadValue
		} else {
			f.BadValue = fmt.Sprintf("%v", e.BadValue)
		}
	}
	return f
}

func apiVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/operator-framework/api" {
				return d.Version
			}
		}
	}
	return "unknown"
}

func emit(out report) {
	for i := range out.Results {
		if out.Results[i].Errors == nil {
			out.Results[i].Errors = []finding{}
		}
		if out.Results[i].Warnings == nil {
			out.Results[i].Warnings = []finding{}
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
