"""PersistentVolumeClaims: what the server and the pvc-protection controller share about them."""

from __future__ import annotations

#: The finalizer that keeps a claim a scheduled pod uses (StorageObjectInUseProtection admission adds it).
PVC_PROTECTION = "kubernetes.io/pvc-protection"
