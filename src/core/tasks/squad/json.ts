// Whole-file JSON with errors at source:line moved to core/util (config.json, finetune_config.json and --config read it too).
export * from '../../util/json.js'
