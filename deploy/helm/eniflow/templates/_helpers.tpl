{{/* The release's name prefix: the release name when it already says eniflow, else <release>-eniflow. */}}
{{- define "eniflow.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Selector labels of one process; call with (dict "root" $ "component" "worker"). */}}
{{- define "eniflow.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "eniflow-%s" .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* Labels of every object of one process (component worker or watcher), as in the kustomize base plus Helm's. */}}
{{- define "eniflow.labels" -}}
{{ include "eniflow.selectorLabels" . }}
{{ include "eniflow.commonLabels" .root }}
{{- end -}}

{{/* Labels of objects shared by both processes. */}}
{{- define "eniflow.commonLabels" -}}
app.kubernetes.io/part-of: eniflow
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "eniflow.image" -}}
{{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end -}}

{{/*
The processes the release runs: mode split (the default) runs the worker and the watcher as two Deployments; mode
single runs one Deployment (named, labelled and served as the worker) whose process runs both roles
(`node dist/main.js --role all`), for small clusters (docs/deploy.md, "One process (worker + watcher)").
*/}}
{{- define "eniflow.components" -}}
{{- if eq (include "eniflow.mode" .) "single" -}}
worker
{{- else -}}
worker watcher
{{- end -}}
{{- end -}}

{{- define "eniflow.mode" -}}
{{- $mode := default "split" .Values.mode -}}
{{- if not (has $mode (list "split" "single")) -}}
{{- fail (printf "mode must be split or single, got %q" $mode) -}}
{{- end -}}
{{- $mode -}}
{{- end -}}

{{/* The ServiceAccount the watcher role runs as: its own, or the worker's in mode single. */}}
{{- define "eniflow.watcherServiceAccount" -}}
{{- if eq (include "eniflow.mode" .) "single" -}}
{{ include "eniflow.fullname" . }}-worker
{{- else -}}
{{ include "eniflow.fullname" . }}-watcher
{{- end -}}
{{- end -}}

{{/*
The watcher role's own variables (leader election, degradation, janitor scope), in the watcher's Deployment or,
in mode single, the one Deployment's. Call with the root context; renders list items at column 0.
*/}}
{{- define "eniflow.watcherEnv" -}}
{{- $fullname := include "eniflow.fullname" . -}}
# Leader election (src/watcher/watcher-config.ts): the Lease lives in this namespace, where the Role
# grants it, one per release, and each replica holds it under its pod name.
- name: LEASE_NAMESPACE
  valueFrom:
    fieldRef:
      fieldPath: metadata.namespace
- name: LEASE_NAME
  value: {{ $fullname }}-watcher
# The degradation switch (`eniflow degradation set`): the `degradation` key of the ConfigMap
# eniflow-control in this namespace; the value degradation (ENIFLOW_DEGRADATION) while it sets none.
{{- with .Values.degradation }}
- name: ENIFLOW_DEGRADATION
  value: {{ . | quote }}
{{- end }}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end -}}

{{/* The watcher role's janitor scope variables (after its health and cluster id). */}}
{{- define "eniflow.watcherScopeEnv" -}}
{{- with .Values.cluster.vpcId }}
- name: ENIFLOW_VPC_ID
  value: {{ . | quote }}
{{- end }}
{{- if .Values.janitor.dryRun }}
- name: JANITOR_DRY_RUN
  value: "true"
{{- end }}
{{- end -}}
