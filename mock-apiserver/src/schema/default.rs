//! Defaulting: setting missing fields to their schema defaults
//! (`structuraldefaulting.Default` of apiextensions-apiserver).

use serde_json::Value;

use super::Structural;

impl Structural {
    /// Sets every missing property, and every `null` one that is not `nullable`, to its
    /// schema default, then descends into the object's fields and items.
    pub fn apply_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, property) in &self.properties {
                    let Some(default) = &property.default else {
                        continue;
                    };
                    match map.get(key) {
                        None => {
                            map.insert(key.clone(), default.clone());
                        }
                        Some(Value::Null) if !property.nullable => {
                            map.insert(key.clone(), default.clone());
                        }
                        Some(_) => {}
                    }
                }
                for (key, child) in map.iter_mut() {
                    if let Some(schema) = self.child(key) {
                        schema.apply_defaults(child);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(schema) = &self.items {
                    for item in items {
                        schema.apply_defaults(item);
                    }
                }
            }
            _ => {}
        }
    }
}
