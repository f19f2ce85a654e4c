"""Hostile XML (issue 10: what already holds must keep holding): entity
expansion bombs ("billion laughs") and external entities (XXE) are refused
or left unexpanded by both loaders; nothing from the file system enters a
model."""
import pytest

import multibody as mb


NAME = {"robot": "name", "mujoco": "model"}  # the root element's name attribute


def laughs(root, body):
    entities = "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8))
    return (f'<?xml version="1.0"?><!DOCTYPE {root} [<!ENTITY a "aaaaaaaaaa">{entities}]>'
            f'<{root} {NAME[root]}="&i;">{body}</{root}>')


def xxe(root, body):
    return (f'<?xml version="1.0"?><!DOCTYPE {root} [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
            f'<{root} {NAME[root]}="&x;">{body}</{root}>')


def test_urdf_entity_bomb_is_refused():
    with pytest.raises(mb.ModelFileError, match="amplification|entit"):
        mb.load_urdf(laughs("robot", '<link name="l"/>'))


def test_urdf_external_entity_is_refused():
    with pytest.raises(mb.ModelFileError, match="external entity"):
        mb.load_urdf(xxe("robot", '<link name="l"/>'))


@pytest.mark.parametrize("make", [laughs, xxe])
def test_mjcf_entities_are_not_expanded(make):
    pytest.importorskip("mujoco")
    text = make("mujoco", '<worldbody><body name="b"><joint/><geom size=".1" mass="1"/></body></worldbody>')
    model = mb.load_mjcf(text)  # MuJoCo's parser keeps entity references as text
    assert model.name in ("&i;", "&x;")
