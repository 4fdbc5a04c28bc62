{{/*
Helpers of the topofit chart: the common labels (only app.kubernetes.io/part-of: topofit, as the
kustomize base sets - no Helm-specific labels, so both install identical objects), the namespace, the
topofit image, the scheduler configuration and the name of its ConfigMap.
*/}}

{{- define "topofit.namespace" -}}
{{ .Values.namespace.name }}
{{- end }}

{{- define "topofit.partOf" -}}
app.kubernetes.io/part-of: topofit
{{- end }}

{{- define "topofit.image" -}}
{{ printf "%s:%s" .Values.image.repository .Values.image.tag }}
{{- end }}

{{- define "topofit.checkMode" -}}
{{- if not (has .Values.mode (list "second" "primary")) }}
{{- fail (printf "mode must be \"second\" or \"primary\", not %q" (toString .Values.mode)) }}
{{- end }}
{{- end }}

{{/*
files/scheduler-config.yaml is manifests/base/scheduler-config.yaml (test/deploy/helm-test.sh fails
when they differ); only its Lease namespace follows namespace.name.
*/}}
{{- define "topofit.schedulerConfig" -}}
{{ .Files.Get "files/scheduler-config.yaml" | replace "resourceNamespace: topofit-system" (printf "resourceNamespace: %s" .Values.namespace.name) }}
{{- end }}

{{/*
The name kustomize's configMapGenerator gives the ConfigMap, so that both install the same object and
a configuration change rolls the Deployment: "topofit-scheduler-config-" and the first 10 hex digits
of the SHA-256 of the JSON {"data":{...},"kind":"ConfigMap","name":""} with 0, 1, 3, a, e turned into
g, h, k, m, t (sigs.k8s.io/kustomize/api/hasher; it hashes an empty name).
*/}}
{{- define "topofit.schedulerConfigName" -}}
{{- $data := dict "scheduler-config.yaml" (include "topofit.schedulerConfig" .) }}
{{- $hash := dict "data" $data "kind" "ConfigMap" "name" "" | toJson | sha256sum | trunc 10 }}
{{- printf "topofit-scheduler-config-%s" ($hash | replace "0" "g" | replace "1" "h" | replace "3" "k" | replace "a" "m" | replace "e" "t") }}
{{- end }}
