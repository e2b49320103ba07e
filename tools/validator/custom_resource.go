package main

// The API server's verdict on a custom resource, offline: what kube-apiserver's apiextensions-apiserver
// (k8s.io/apiextensions-apiserver at the version go.mod pins) runs on a create, or on an update when
// an old object is given, for a CRD it serves.
//
// Per request:
//  1. the CRD as the CRD registry stores it on create: decoded, v1 defaults, converted to the
//     internal version. Not run: the CRD registry's own validation (validation.ValidateCustomResourceDefinition,
//     which refuses a rule whose estimated cost exceeds the limits): it links the webhook client and
//     its gRPC egress, 32 MB more of WebAssembly (98 MB instead of 66 MB, measured 2026-12-04). A rule
//     that does not compile is still reported, as a cause on the object (cel.NewValidator's);
//  2. the version's schema as the CR handler serves it (pkg/apiserver/customresource_handler.go):
//     structural schema with defaults pruned, the OpenAPI schema validator, the status and scale
//     subresources;
//  3. the object as the handler's decoder leaves it: unknown fields pruned, null non-nullable fields
//     dropped, metadata coerced (unstructuredSchemaCoercer.apply), then structural defaults;
//  4. rest.BeforeCreate (or rest.BeforeUpdate with the old object, decoded the same way) with a
//     strategy whose Validate and ValidateUpdate compose what pkg/registry/customresource's strategy
//     and validator compose (that package links the generic registry, which does not build for
//     wasip1, see copied_strategies.go): type meta, ObjectMeta, the OpenAPI schema (ratcheting on
//     update), embedded resources, list-type invariants, then the x-kubernetes-validations CEL rules
//     with the server's per-call limit and per-request runtime budget, skipped after a blocking error
//     as the server skips them.
//
// The scale subresource's replicas checks are left out (the operator SDK's CRDs declare no scale
// subresource); field selectors and printer columns do not validate objects.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsinstall "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/install"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structurallisttype "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apiextensions-apiserver/pkg/crdserverscheme"
	apiextensionsfeatures "k8s.io/apiextensions-apiserver/pkg/features"
	"k8s.io/apimachinery/pkg/api/operation"
	genericvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	apiserverfeatures "k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage/names"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
)

// CustomResourceRequest is one custom resource to validate against a CRD.
type CustomResourceRequest struct {
	// CRD is the CustomResourceDefinition (apiextensions.k8s.io/v1) as JSON.
	CRD json.RawMessage `json:"crd"`
	// Version is the CRD version the object is written in (its apiVersion's version).
	Version string `json:"version"`
	// Object is the custom resource as JSON.
	Object json.RawMessage `json:"object"`
	// OldObject, when given, makes the request an update of it (transition rules, ratcheting).
	OldObject json.RawMessage `json:"oldObject,omitempty"`
}

// CustomResourceResult is the verdict on one custom resource.
type CustomResourceResult struct {
	// Verdict: "valid" or "invalid" (Errors say why, or Reason when there is no field cause).
	Verdict string       `json:"verdict"`
	Errors  []FieldError `json:"errors,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	// UnknownFields are the paths the server prunes (a warning, or an error with fieldValidation=Strict).
	UnknownFields []string `json:"unknownFields,omitempty"`
	// Object is the object as the server would store it: pruned, defaulted, status dropped on create
	// when the status subresource is enabled (system metadata left out).
	Object map[string]any `json:"object,omitempty"`
}

var crdScheme = runtime.NewScheme()
var crdDecoder runtime.Decoder

func init() {
	apiextensionsinstall.Install(crdScheme)
	crdDecoder = serializer.NewCodecFactory(crdScheme).UniversalDeserializer()
}

// servedVersion is a CRD version as the CR handler serves it: built once per CRD and version (the CEL
// programs are compiled here) and kept for the process.
type servedVersion struct {
	strategy   customResourceStrategy
	structural *structuralschema.Structural
	// preserveUnknownFields: spec.preserveUnknownFields (v1 allows only false; kept as the handler reads it).
	preserveUnknownFields bool
}

var servedVersions = map[[sha256.Size]byte]*servedVersion{}

// ValidateCustomResources validates a JSON array of CustomResourceRequest and returns the JSON array
// of CustomResourceResult.
func ValidateCustomResources(requests []CustomResourceRequest) []CustomResourceResult {
	results := make([]CustomResourceResult, 0, len(requests))
	for _, request := range requests {
		results = append(results, validateCustomResource(request))
	}
	return results
}

func validateCustomResource(request CustomResourceRequest) (result CustomResourceResult) {
	defer func() {
		if p := recover(); p != nil {
			result = CustomResourceResult{Verdict: "invalid", Reason: fmt.Sprintf("validator panicked: %v", p)}
		}
	}()
	served, err := serve(request.CRD, request.Version)
	if err != nil {
		return CustomResourceResult{Verdict: "invalid", Reason: err.Error()}
	}
	object, unknown, err := served.decode(request.Object)
	if err != nil {
		return CustomResourceResult{Verdict: "invalid", Reason: err.Error()}
	}
	result.UnknownFields = unknown
	if len(request.OldObject) == 0 {
		ctx := genericapirequest.WithNamespace(context.Background(), requestNamespace(served, object, nil))
		rest.FillObjectMetaSystemFields(object)
		err = rest.BeforeCreate(served.strategy, ctx, object)
	} else {
		old, _, oldErr := served.decode(request.OldObject)
		if oldErr != nil {
			return CustomResourceResult{Verdict: "invalid", Reason: "the old object: " + oldErr.Error()}
		}
		ctx := genericapirequest.WithNamespace(context.Background(), requestNamespace(served, object, old))
		asStored(old, object)
		err = rest.BeforeUpdate(served.strategy, ctx, object, old)
	}
	var builtIn Result
	builtIn.absorb(err)
	result.Verdict, result.Errors, result.Reason = builtIn.Verdict, builtIn.Errors, builtIn.Reason
	stored := object.DeepCopy().Object
	if meta, ok := stored["metadata"].(map[string]any); ok {
		for _, system := range []string{"uid", "creationTimestamp", "generation"} {
			delete(meta, system)
		}
	}
	result.Object = stored
	return result
}

// requestNamespace: the object's namespace for a namespaced kind (the request's, as a client sends
// it: the object's, else the old object's, else "default"; set on both), none for a cluster-scoped one.
func requestNamespace(served *servedVersion, object, old *unstructured.Unstructured) string {
	if !served.strategy.namespaceScoped {
		return ""
	}
	namespace := object.GetNamespace()
	if namespace == "" && old != nil {
		namespace = old.GetNamespace()
	}
	if namespace == "" {
		namespace = "default"
	}
	for _, u := range []*unstructured.Unstructured{object, old} {
		if u != nil && u.GetNamespace() == "" {
			u.SetNamespace(namespace)
		}
	}
	return namespace
}

// asStored gives the old object what a stored object has (system metadata, a resourceVersion) and
// the new one the old one's resourceVersion when it has none: an update as a client sends it, e.g.
// a server-side apply, which the server applies to the stored object.
func asStored(old, object *unstructured.Unstructured) {
	if old.GetUID() == "" {
		rest.FillObjectMetaSystemFields(old)
		old.SetGeneration(1)
	}
	if old.GetResourceVersion() == "" {
		old.SetResourceVersion("1")
	}
	if object.GetResourceVersion() == "" {
		object.SetResourceVersion(old.GetResourceVersion())
	}
}

// serve builds (or finds) the version of the CRD as the CR handler serves it.
func serve(crdJSON []byte, version string) (*servedVersion, error) {
	key := sha256.Sum256(append(append([]byte(version), 0), crdJSON...))
	if served, ok := servedVersions[key]; ok {
		return served, nil
	}
	served, err := newServedVersion(crdJSON, version)
	if err != nil {
		return nil, err
	}
	servedVersions[key] = served
	return served, nil
}

func newServedVersion(crdJSON []byte, version string) (*servedVersion, error) {
	v1crd := &apiextensionsv1.CustomResourceDefinition{}
	if _, _, err := crdDecoder.Decode(crdJSON, nil, v1crd); err != nil {
		return nil, fmt.Errorf("the CRD cannot be decoded as an apiextensions.k8s.io/v1 CustomResourceDefinition: %v", err)
	}
	crdScheme.Default(v1crd)
	crd := &apiextensions.CustomResourceDefinition{}
	if err := crdScheme.Convert(v1crd, crd, nil); err != nil {
		return nil, fmt.Errorf("the CRD %s cannot be converted: %v", v1crd.Name, err)
	}
	// the CRD registry's PrepareForCreate: status starts empty, the storage version stored
	crd.Status = apiextensions.CustomResourceDefinitionStatus{}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			crd.Status.StoredVersions = []string{v.Name}
			break
		}
	}
	var servedNames []string
	found := false
	for _, v := range crd.Spec.Versions {
		if v.Served {
			servedNames = append(servedNames, v.Name)
		}
		found = found || (v.Name == version && v.Served)
	}
	if !found {
		return nil, fmt.Errorf("the CRD %s serves no version %q (it serves %s)", crd.Name, version, strings.Join(servedNames, ", "))
	}

	validation, err := apiextensions.GetSchemaForVersion(crd, version)
	if err != nil {
		return nil, err
	}
	var schemaProps *apiextensions.JSONSchemaProps
	if validation != nil {
		schemaProps = validation.OpenAPIV3Schema
	}
	var structural *structuralschema.Structural
	if schemaProps != nil {
		structural, err = structuralschema.NewStructural(schemaProps)
		if err != nil {
			return nil, fmt.Errorf("the CRD %s version %s has no structural schema: %v", crd.Name, version, err)
		}
		structural = structural.DeepCopy()
		if err := structuraldefaulting.PruneDefaults(structural); err != nil {
			return nil, fmt.Errorf("the CRD %s version %s: %v", crd.Name, version, err)
		}
	}
	schemaValidator, _, err := apiservervalidation.NewSchemaValidator(schemaProps)
	if err != nil {
		return nil, err
	}
	subresources, err := apiextensions.GetSubresourcesForVersion(crd, version)
	if err != nil {
		return nil, err
	}
	kind := schema.GroupVersionKind{Group: crd.Spec.Group, Version: version, Kind: crd.Spec.Names.Kind}
	strategy := customResourceStrategy{
		ObjectTyper:     crdserverscheme.NewUnstructuredObjectTyper(),
		NameGenerator:   names.SimpleNameGenerator,
		namespaceScoped: crd.Spec.Scope == apiextensions.NamespaceScoped,
		kind:            kind,
		schemaValidator: schemaValidator,
		structural:      structural,
		hasStatus:       subresources != nil && subresources.Status != nil,
	}
	if structural != nil {
		strategy.celValidator = cel.NewValidator(structural, true, celconfig.PerCallLimit)
	}
	return &servedVersion{strategy: strategy, structural: structural, preserveUnknownFields: crd.Spec.PreserveUnknownFields != nil && *crd.Spec.PreserveUnknownFields}, nil
}

// decode turns the JSON into the object the handler's decoder produces for this version: JSON into
// unstructured, unknown fields pruned, metadata coerced, then the schema's defaults. Returns the paths
// of the unknown fields (the strict decoder's "unknown field" list).
func (s *servedVersion) decode(raw []byte) (*unstructured.Unstructured, []string, error) {
	decoded, _, err := unstructured.UnstructuredJSONScheme.Decode(raw, nil, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("the object cannot be decoded: %v", err)
	}
	u, ok := decoded.(*unstructured.Unstructured)
	if !ok {
		return nil, nil, fmt.Errorf("the object is a %T, not one object", decoded)
	}
	if gvk := u.GroupVersionKind(); gvk != s.strategy.kind {
		// the handler serves only its kind and version at this path
		return nil, nil, fmt.Errorf("the object is a %s, not a %s", gvk.GroupVersion().WithKind(gvk.Kind), s.strategy.kind.GroupVersion().WithKind(s.strategy.kind.Kind))
	}
	unknown, err := s.coerce(u)
	if err != nil {
		return nil, nil, err
	}
	if s.structural != nil {
		structuraldefaulting.Default(u.Object, s.structural)
	}
	return u, unknown, nil
}

// coerce is what the handler's unstructuredSchemaCoercer does to a decoded request body (no
// dropping of malformed metadata, unknown field paths returned).
func (s *servedVersion) coerce(u *unstructured.Unstructured) ([]string, error) {
	kind, foundKind, err := unstructured.NestedString(u.Object, "kind")
	if err != nil {
		return nil, err
	}
	apiVersion, foundAPIVersion, err := unstructured.NestedString(u.Object, "apiVersion")
	if err != nil {
		return nil, err
	}
	objectMeta, foundObjectMeta, unknown, err := schemaobjectmeta.GetObjectMetaWithOptions(u.Object, schemaobjectmeta.ObjectMetaOptions{ReturnUnknownFieldPaths: true})
	if err != nil {
		return nil, err
	}
	if !s.preserveUnknownFields && s.structural != nil {
		unknown = append(unknown, structuralpruning.PruneWithOptions(u.Object, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})...)
		structuraldefaulting.PruneNonNullableNullsWithoutDefaults(u.Object, s.structural)
	}
	if s.structural != nil {
		coerceErr, paths := schemaobjectmeta.CoerceWithOptions(nil, u.Object, s.structural, false, schemaobjectmeta.CoerceOptions{ReturnUnknownFieldPaths: true})
		if coerceErr != nil {
			return nil, field.ErrorList{coerceErr}.ToAggregate()
		}
		unknown = append(unknown, paths...)
	}
	if foundKind {
		u.SetKind(kind)
	}
	if foundAPIVersion {
		u.SetAPIVersion(apiVersion)
	}
	if foundObjectMeta {
		if err := schemaobjectmeta.SetObjectMeta(u.Object, objectMeta); err != nil {
			return nil, err
		}
	}
	return unknown, nil
}

// customResourceStrategy is the create and update strategy of pkg/registry/customresource, composed
// of the same functions (see the file's comment): rest.RESTCreateStrategy and rest.RESTUpdateStrategy.
type customResourceStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	namespaceScoped bool
	kind            schema.GroupVersionKind
	schemaValidator apiservervalidation.SchemaValidator
	structural      *structuralschema.Structural
	celValidator    *cel.Validator
	hasStatus       bool
}

func (s customResourceStrategy) NamespaceScoped() bool { return s.namespaceScoped }

// PrepareForCreate: a create cannot set status when the status subresource is enabled; generation 1.
func (s customResourceStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	u := obj.(*unstructured.Unstructured)
	if s.hasStatus {
		delete(u.Object, "status")
	}
	u.SetGeneration(1)
}

// PrepareForUpdate: an update cannot change status when the status subresource is enabled.
func (s customResourceStrategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	if !s.hasStatus {
		return
	}
	if status, ok := o.Object["status"]; ok {
		u.Object["status"] = status
	} else {
		delete(u.Object, "status")
	}
}

func (s customResourceStrategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	u := obj.(*unstructured.Unstructured)
	if errs := s.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	metadata, errs := objectMetaOf(u)
	if len(errs) > 0 {
		return errs
	}
	errs = genericvalidation.ValidateObjectMetaDeclaratively(ctx, operation.Create, metadata, nil, s.namespaceScoped, genericvalidation.NameIsDNSSubdomain, field.NewPath("metadata"), utilfeature.DefaultFeatureGate.Enabled(apiserverfeatures.DeclarativeValidationBeta))
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, u.UnstructuredContent(), s.schemaValidator)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, s.structural, false)...)
	errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, u.Object)...)
	return s.validateRules(ctx, errs, u.Object, nil)
}

func (s customResourceStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	u, o := obj.(*unstructured.Unstructured), old.(*unstructured.Unstructured)
	if errs := s.validateTypeMeta(u); len(errs) > 0 {
		return errs
	}
	var options []apiservervalidation.ValidationOption
	var celOptions []cel.Option
	if utilfeature.DefaultFeatureGate.Enabled(apiextensionsfeatures.CRDValidationRatcheting) {
		correlated := common.NewCorrelatedObject(u.Object, o.Object, &model.Structural{Structural: s.structural})
		options = append(options, apiservervalidation.WithRatcheting(correlated))
		celOptions = append(celOptions, cel.WithRatcheting(correlated))
	}
	metadata, errs := objectMetaOf(u)
	if len(errs) > 0 {
		return errs
	}
	oldMetadata, errs := objectMetaOf(o)
	if len(errs) > 0 {
		return errs
	}
	errs = genericvalidation.ValidateObjectMetaDeclaratively(ctx, operation.Update, metadata, oldMetadata, s.namespaceScoped, nil, field.NewPath("metadata"), utilfeature.DefaultFeatureGate.Enabled(apiserverfeatures.DeclarativeValidationBeta))
	errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, u.UnstructuredContent(), o.UnstructuredContent(), s.schemaValidator, options...)...)
	errs = append(errs, schemaobjectmeta.Validate(ctx, nil, u.Object, s.structural, false)...)
	// list-type invariants ratchet: checked only when the old object keeps them
	if len(structurallisttype.ValidateListSetsAndMaps(nil, s.structural, o.Object)) == 0 {
		errs = append(errs, structurallisttype.ValidateListSetsAndMaps(nil, s.structural, u.Object)...)
	}
	return s.validateRules(ctx, errs, u.Object, o.Object, celOptions...)
}

// validateRules runs the x-kubernetes-validations rules with the server's runtime budget, unless an
// earlier error blocks them (the server's hasBlockingErr: type, required, enum, length and count errors).
func (s customResourceStrategy) validateRules(ctx context.Context, errs field.ErrorList, obj, old map[string]any, options ...cel.Option) field.ErrorList {
	if s.celValidator == nil {
		return errs
	}
	for _, err := range errs {
		switch err.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	var oldObject any
	if old != nil {
		oldObject = old
	}
	ruleErrs, _ := s.celValidator.Validate(ctx, nil, s.structural, obj, oldObject, celconfig.RuntimeCELCostBudget, options...)
	return append(errs, ruleErrs...)
}

func (s customResourceStrategy) validateTypeMeta(u *unstructured.Unstructured) field.ErrorList {
	var errs field.ErrorList
	if u.GetKind() != s.kind.Kind {
		errs = append(errs, field.Invalid(field.NewPath("kind"), u.GetKind(), fmt.Sprintf("must be %v", s.kind.Kind)))
	}
	if u.GetAPIVersion() != s.kind.Group+"/"+s.kind.Version {
		errs = append(errs, field.Invalid(field.NewPath("apiVersion"), u.GetAPIVersion(), fmt.Sprintf("must be %v", s.kind.Group+"/"+s.kind.Version)))
	}
	return errs
}

// objectMetaOf is the validator's getObjectMeta: the metadata map as an ObjectMeta.
func objectMetaOf(u *unstructured.Unstructured) (*metav1.ObjectMeta, field.ErrorList) {
	raw := u.Object["metadata"]
	if raw == nil {
		return &metav1.ObjectMeta{}, nil
	}
	metadataMap, ok := raw.(map[string]any)
	if !ok {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, fmt.Sprintf("expected map[string]interface{}, got %T", raw))}
	}
	meta := &metav1.ObjectMeta{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(metadataMap, meta); err != nil {
		return nil, field.ErrorList{field.Invalid(field.NewPath("metadata"), raw, err.Error())}
	}
	return meta, nil
}

func (customResourceStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (customResourceStrategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}
func (customResourceStrategy) Canonicalize(runtime.Object)              {}
func (customResourceStrategy) AllowCreateOnUpdate(context.Context) bool { return false }
func (customResourceStrategy) AllowUnconditionalUpdate(context.Context) bool {
	return false
}
