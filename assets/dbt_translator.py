"""How dbt resources appear in Dagster: raw sources keep their three-part
relation name as the asset key (raw/commerce/order_lines), so the raw-loader
assets and dbt's sources are the same assets."""


from typing import Any, Mapping

from dagster import AssetKey, AssetSpec
from dagster_dbt import DagsterDbtTranslator, DagsterDbtTranslatorSettings


class CanonDbtTranslator(DagsterDbtTranslator):
    def __init__(self) -> None:
        super().__init__(settings=DagsterDbtTranslatorSettings(enable_asset_checks=True))

    def get_asset_spec(self, manifest: Mapping[str, Any], unique_id: str, project: Any) -> AssetSpec:
        spec = super().get_asset_spec(manifest, unique_id, project)
        props = self.get_resource_props(manifest, unique_id)
        if props["resource_type"] == "source":
            return spec.replace_attributes(key=AssetKey(["raw", props["source_name"], props["name"]]), group_name="raw")
        return spec.replace_attributes(group_name="dbt")
