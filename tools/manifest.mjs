#!/usr/bin/env node
// Writes oclif.manifest.json after a build (what `oclif manifest` does, without that large
// dev dependency): with it, `span X` imports only X's module instead of every command's,
// so a stage in a pipe starts fast and a heavy command (tfjs) costs nothing to the others.
import {Config} from '@oclif/core'
import {rmSync, writeFileSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const file = join(root, 'oclif.manifest.json')
rmSync(file, {force: true}) // never build a manifest from a stale one
const config = await Config.load({root, ignoreManifest: true})
const plugin = config.getPluginsList().find((p) => p.root === root)
if (!plugin) throw new Error('manifest: the root plugin was not found')
writeFileSync(file, JSON.stringify(plugin.manifest, null, 1) + '\n')
console.error(`oclif.manifest.json: ${Object.keys(plugin.manifest.commands).length} commands`)
