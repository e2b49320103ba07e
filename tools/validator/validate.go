// Package main is the offline validator of built-in Kubernetes objects: it runs, for each object, what
// the API server runs on create before storing it (k8s.io/kubernetes at the version go.mod pins, the
// control plane's own): decode the versioned JSON, apply the scheme's defaults, convert to the
// internal version, then rest.BeforeCreate with the kind's registry strategy (PrepareForCreate, the
// kind's Validate… function with the options the server passes, ObjectMeta validation).
//
// Kinds without a strategy here are reported "unchecked", never "valid".
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	_ "time/tzdata" // CronJob spec.timeZone is validated against the time zone database

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/api/legacyscheme"

	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"

	"k8s.io/kubernetes/pkg/registry/apps/daemonset"
	"k8s.io/kubernetes/pkg/registry/apps/deployment"
	"k8s.io/kubernetes/pkg/registry/apps/statefulset"
	"k8s.io/kubernetes/pkg/registry/autoscaling/horizontalpodautoscaler"
	"k8s.io/kubernetes/pkg/registry/batch/cronjob"
	"k8s.io/kubernetes/pkg/registry/networking/ingress"
	"k8s.io/kubernetes/pkg/registry/networking/networkpolicy"
	"k8s.io/kubernetes/pkg/registry/policy/poddisruptionbudget"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrole"
	"k8s.io/kubernetes/pkg/registry/rbac/clusterrolebinding"
	"k8s.io/kubernetes/pkg/registry/rbac/role"
	"k8s.io/kubernetes/pkg/registry/rbac/rolebinding"
)

// strategies: the create strategy the API server's registry uses for each kind (pkg/registry/<group>/<kind>),
// or its copy (copied_strategies.go).
var strategies = map[schema.GroupKind]kindStrategy{
	{Group: "", Kind: "ConfigMap"}:                                   {"configmaps", configMapStrategy},
	{Group: "", Kind: "PersistentVolumeClaim"}:                       {"persistentvolumeclaims", persistentVolumeClaimStrategy},
	{Group: "", Kind: "Secret"}:                                      {"secrets", secretStrategy},
	{Group: "", Kind: "Service"}:                                     {"services", serviceStrategy},
	{Group: "", Kind: "ServiceAccount"}:                              {"serviceaccounts", serviceAccountStrategy},
	{Group: "apps", Kind: "DaemonSet"}:                               {"daemonsets", daemonset.Strategy},
	{Group: "apps", Kind: "Deployment"}:                              {"deployments", deployment.Strategy},
	{Group: "apps", Kind: "StatefulSet"}:                             {"statefulsets", statefulset.Strategy},
	{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}:          {"horizontalpodautoscalers", horizontalpodautoscaler.Strategy},
	{Group: "batch", Kind: "CronJob"}:                                {"cronjobs", cronjob.Strategy},
	{Group: "batch", Kind: "Job"}:                                    {"jobs", jobStrategy},
	{Group: "networking.k8s.io", Kind: "Ingress"}:                    {"ingresses", ingress.Strategy},
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:              {"networkpolicies", networkpolicy.Strategy},
	{Group: "policy", Kind: "PodDisruptionBudget"}:                   {"poddisruptionbudgets", poddisruptionbudget.Strategy},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        {"clusterroles", clusterrole.Strategy},
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: {"clusterrolebindings", clusterrolebinding.Strategy},
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               {"roles", role.Strategy},
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        {"rolebindings", rolebinding.Strategy},
}

// kindStrategy: the kind's resource (its REST path segment) and its create strategy.
type kindStrategy struct {
	resource string
	strategy rest.RESTCreateStrategy
}

func init() {
	// klog's lines (e.g. declarative validation's mismatch reports) would reach the caller's stderr.
	klog.SetLogger(logr.Discard())
}

// decoder decodes versioned JSON, defaults it and converts it to the internal version, as the API
// server's request decoding does.
var decoder = legacyscheme.Codecs.UniversalDecoder()

// FieldError is one cause of a refusal, as the API server's Status details carry it.
type FieldError struct {
	// Field is the path, e.g. spec.ports[1].name (empty for an object-level problem).
	Field string `json:"field"`
	// Type is the cause's reason, e.g. FieldValueRequired.
	Type string `json:"type"`
	// Message is the server's message without the path, e.g. "Required value".
	Message string `json:"message"`
}

// Result is the verdict on one object.
type Result struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace,omitempty"`
	Name       string `json:"name"`
	// Verdict: "valid", "invalid" (Errors say why), "unchecked" (no strategy for the kind here).
	Verdict string       `json:"verdict"`
	Errors  []FieldError `json:"errors,omitempty"`
	// Reason is the whole message of an "invalid" verdict that has no field causes (e.g. a decoding error).
	Reason string `json:"reason,omitempty"`
}

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// ValidateAll validates a JSON array of objects and returns the JSON array of their results; or,
// given {"crds": [CRD...], "customResources": [CustomResourceRequest...]} (a request's "crd" is a CRD
// or the index of one in "crds"), returns {"customResources":
// [CustomResourceResult...]} (custom_resource.go).
func ValidateAll(input []byte) []byte {
	if trimmed := bytes.TrimSpace(input); len(trimmed) > 0 && trimmed[0] == '{' {
		var request struct {
			// CRDs: CRDs a request's "crd" may name by index, so many CRs of one CRD carry it once.
			CRDs            []json.RawMessage       `json:"crds"`
			CustomResources []CustomResourceRequest `json:"customResources"`
		}
		if err := json.Unmarshal(trimmed, &request); err != nil {
			return mustJSON(map[string]string{"error": "input is not {\"customResources\": [...]}: " + err.Error()})
		}
		for i, cr := range request.CustomResources {
			var index int
			if json.Unmarshal(cr.CRD, &index) == nil && index >= 0 && index < len(request.CRDs) {
				request.CustomResources[i].CRD = request.CRDs[index]
			}
		}
		return mustJSON(map[string]any{"customResources": ValidateCustomResources(request.CustomResources)})
	}
	var objects []json.RawMessage
	if err := json.Unmarshal(input, &objects); err != nil {
		return mustJSON(map[string]string{"error": "input is not a JSON array of objects: " + err.Error()})
	}
	results := make([]Result, 0, len(objects))
	for _, raw := range objects {
		results = append(results, validateOne(raw))
	}
	return mustJSON(results)
}

func mustJSON(v any) []byte {
	out, err := json.Marshal(v)
	if err != nil {
		out, _ = json.Marshal(map[string]string{"error": err.Error()})
	}
	return out
}

func validateOne(raw []byte) (result Result) {
	var tm typeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return Result{Verdict: "invalid", Reason: "not a Kubernetes object: " + err.Error()}
	}
	result = Result{APIVersion: tm.APIVersion, Kind: tm.Kind, Namespace: tm.Metadata.Namespace, Name: tm.Metadata.Name}
	gv, err := schema.ParseGroupVersion(tm.APIVersion)
	if err != nil {
		result.Verdict, result.Reason = "invalid", err.Error()
		return result
	}
	entry, known := strategies[schema.GroupKind{Group: gv.Group, Kind: tm.Kind}]
	if !known || !legacyscheme.Scheme.Recognizes(gv.WithKind(tm.Kind)) {
		result.Verdict = "unchecked"
		return result
	}
	defer func() {
		if p := recover(); p != nil {
			result.Verdict, result.Errors, result.Reason = "invalid", nil, fmt.Sprintf("validator panicked: %v", p)
		}
	}()

	obj, _, err := decoder.Decode(raw, nil, nil)
	if err != nil {
		// the create handler's words (k8s.io/apiserver/pkg/endpoints/handlers/rest.go transformDecodeError)
		result.Verdict, result.Reason = "invalid", fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", tm.Kind, gv.Version, tm.Kind, err)
		return result
	}
	result.absorb(beforeCreate(entry, gv, obj))
	return result
}

// beforeCreate is what the generic registry's Store.Create does before storing: system metadata,
// the request's namespace, then rest.BeforeCreate.
func beforeCreate(entry kindStrategy, gv schema.GroupVersion, obj runtime.Object) error {
	strategy := entry.strategy
	accessor, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	rest.FillObjectMetaSystemFields(accessor)
	namespace := ""
	if strategy.NamespaceScoped() {
		namespace = accessor.GetNamespace()
		if namespace == "" {
			namespace = "default"
		}
	}
	ctx := genericapirequest.WithNamespace(context.Background(), namespace)
	// The request as a create would make it (declarative validation reads the group and version here).
	ctx = genericapirequest.WithRequestInfo(ctx, &genericapirequest.RequestInfo{
		IsResourceRequest: true, Verb: "create", APIPrefix: apiPrefix(gv), APIGroup: gv.Group, APIVersion: gv.Version,
		Namespace: namespace, Resource: entry.resource, Name: accessor.GetName(),
	})
	return rest.BeforeCreate(strategy, ctx, obj)
}

func apiPrefix(gv schema.GroupVersion) string {
	if gv.Group == "" {
		return "api"
	}
	return "apis"
}

func (r *Result) absorb(err error) {
	if err == nil {
		r.Verdict = "valid"
		return
	}
	r.Verdict = "invalid"
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		s := status.Status()
		if s.Details != nil && len(s.Details.Causes) > 0 {
			for _, cause := range s.Details.Causes {
				r.Errors = append(r.Errors, FieldError{Field: cause.Field, Type: string(cause.Type), Message: cause.Message})
			}
			return
		}
		r.Reason = s.Message
		return
	}
	r.Reason = err.Error()
}
