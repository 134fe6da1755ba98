// SPDX-License-Identifier: Apache-2.0
// Renders a Helm chart the way `helm template` does, for the schema test where helm itself is
// not packaged (Debian 12 has no helm): the same engine, Go's text/template with sprig's
// function map (Debian's golang-github-masterminds-sprig-dev) plus the functions Helm adds
// (include, tpl, required, toYaml, fromYaml, toJson), missingkey=zero as Helm sets it, values.yaml
// as .Values, .Release, .Chart from Chart.yaml, and partials (templates/_*.tpl) not rendered.
// Output: every rendered template, as YAML documents with "# Source:" headers, as helm prints.
//
// Usage: helm_render CHART_DIR [--release NAME] [--namespace NS] [--values FILE]...
// (--values files are merged over values.yaml in order, maps key by key, as `helm -f` does).
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"gopkg.in/yaml.v3"
)

func readYaml(path string) (map[string]interface{}, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := map[string]interface{}{}
	if err := yaml.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return out, nil
}

// Chart.yaml's keys as Helm exposes them (.Chart.Name, .Chart.Version, .Chart.AppVersion).
func chartObject(meta map[string]interface{}) map[string]interface{} {
	out := map[string]interface{}{}
	for k, v := range meta {
		out[strings.ToUpper(k[:1])+k[1:]] = v
	}
	return out
}

// Merges `over` into `base` as Helm merges values files: maps recursively, anything else replaced.
func merge(base, over map[string]interface{}) map[string]interface{} {
	for k, v := range over {
		if vm, ok := v.(map[string]interface{}); ok {
			if bm, ok := base[k].(map[string]interface{}); ok {
				base[k] = merge(bm, vm)
				continue
			}
		}
		base[k] = v
	}
	return base
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: helm_render CHART_DIR [--release NAME] [--namespace NS]")
		os.Exit(2)
	}
	dir := os.Args[1]
	release, namespace := "release", "default"
	var valueFiles []string
	for i := 2; i < len(os.Args); i += 2 {
		if i+1 >= len(os.Args) {
			fmt.Fprintln(os.Stderr, "helm_render: no value for", os.Args[i])
			os.Exit(2)
		}
		switch os.Args[i] {
		case "--release":
			release = os.Args[i+1]
		case "--namespace":
			namespace = os.Args[i+1]
		case "--values":
			valueFiles = append(valueFiles, os.Args[i+1])
		default:
			fmt.Fprintln(os.Stderr, "helm_render: unknown flag", os.Args[i])
			os.Exit(2)
		}
	}
	meta, err := readYaml(filepath.Join(dir, "Chart.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helm_render:", err)
		os.Exit(1)
	}
	values, err := readYaml(filepath.Join(dir, "values.yaml"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "helm_render:", err)
		os.Exit(1)
	}
	for _, f := range valueFiles {
		over, err := readYaml(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helm_render:", err)
			os.Exit(1)
		}
		values = merge(values, over)
	}
	top := map[string]interface{}{
		"Values":       values,
		"Chart":        chartObject(meta),
		"Release":      map[string]interface{}{"Name": release, "Namespace": namespace, "Service": "Helm", "IsInstall": true},
		"Capabilities": map[string]interface{}{"KubeVersion": map[string]interface{}{"Version": "v1.29.0"}},
	}

	t := template.New("chart")
	funcs := sprig.TxtFuncMap()
	delete(funcs, "env") // Helm removes these: a chart must not read the renderer's environment.
	delete(funcs, "expandenv")
	funcs["toYaml"] = func(v interface{}) string {
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		if err := enc.Encode(v); err != nil {
			return ""
		}
		return strings.TrimSuffix(buf.String(), "\n")
	}
	funcs["fromYaml"] = func(s string) map[string]interface{} {
		out := map[string]interface{}{}
		if err := yaml.Unmarshal([]byte(s), &out); err != nil {
			out["Error"] = err.Error()
		}
		return out
	}
	funcs["toJson"] = func(v interface{}) string {
		b, _ := json.Marshal(v)
		return string(b)
	}
	funcs["required"] = func(msg string, v interface{}) (interface{}, error) {
		if v == nil || v == "" {
			return v, fmt.Errorf("%s", msg)
		}
		return v, nil
	}
	funcs["include"] = func(name string, data interface{}) (string, error) {
		var buf bytes.Buffer
		err := t.ExecuteTemplate(&buf, name, data)
		return buf.String(), err
	}
	funcs["tpl"] = func(text string, data interface{}) (string, error) {
		c, err := t.Clone()
		if err != nil {
			return "", err
		}
		inner, err := c.New("tpl").Parse(text)
		if err != nil {
			return "", err
		}
		var buf bytes.Buffer
		err = inner.Execute(&buf, data)
		return buf.String(), err
	}
	t = t.Funcs(funcs).Option("missingkey=zero")

	files, _ := filepath.Glob(filepath.Join(dir, "templates", "*"))
	sort.Strings(files)
	var rendered []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".yaml") && !strings.HasSuffix(f, ".tpl") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helm_render:", err)
			os.Exit(1)
		}
		name := filepath.Join(filepath.Base(dir), "templates", filepath.Base(f))
		if _, err := t.New(name).Parse(string(data)); err != nil {
			fmt.Fprintln(os.Stderr, "helm_render:", err)
			os.Exit(1)
		}
		if !strings.HasPrefix(filepath.Base(f), "_") {
			rendered = append(rendered, name)
		}
	}
	for _, name := range rendered {
		var buf bytes.Buffer
		if err := t.ExecuteTemplate(&buf, name, top); err != nil {
			fmt.Fprintln(os.Stderr, "helm_render:", err)
			os.Exit(1)
		}
		// Helm replaces the zero value's "<no value>" with "" as well.
		text := strings.ReplaceAll(buf.String(), "<no value>", "")
		if strings.TrimSpace(text) == "" {
			continue
		}
		fmt.Printf("---\n# Source: %s\n%s\n", name, strings.TrimSpace(text))
	}
}
