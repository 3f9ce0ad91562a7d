"""The adapters' shared parts: a model's reply as an action, observations as messages, clear import errors."""

from __future__ import annotations

import numpy as np
import pytest

from agentenvs.integrations.common import (
    TextEpisode,
    action_from_text,
    action_to_text,
    message_content,
    require,
    step_metadata,
)
from tests.integrations.cases import image_parts


def test_a_reply_becomes_an_action():
    call = {"name": "bash", "arguments": {"command": "ls"}}
    assert (
        action_from_text('Let me look.\n<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>')
        == call
    )
    assert action_from_text("```bash\nls -la\n```") == "ls -la"
    assert action_from_text("go north") == "go north"
    assert action_from_text("<tool_call>{not json</tool_call>") == "{not json"  # the env will say why
    assert action_from_text(action_to_text(call)) == action_to_text(call)  # JSON text: the env parses it
    assert action_to_text("done") == "done"


def test_an_image_becomes_an_image_part_and_text_stays_text():
    screen = np.arange(4 * 6 * 3, dtype=np.uint8).reshape(4, 6, 3)
    content = message_content({"instruction": "Do it.", "text": "page", "screenshot": screen}, first=True)
    assert content[0] == {"type": "text", "text": "Task:\nDo it.\n\npage"}
    (image,) = image_parts(content)
    assert np.array_equal(image, screen)
    assert message_content({"instruction": "i", "text": "t", "screenshot": screen}, first=False, images="never") == "t"


def test_a_missing_library_names_the_extra():
    with pytest.raises(ImportError, match=r"pip install 'agentenvs\[skyrl\]'"):
        require("no_such_module_here", "skyrl", "skyrl-gym")


def test_an_episode_counts_reward_and_refuses_steps_after_the_end():
    episode = TextEpisode("textgame/coin-easy-0", seed=0)
    content, info = episode.reset()
    assert "Task:" in content and info["task_id"] == "textgame/coin-easy-0"
    result = episode.step("done")
    assert result.done and result.content is None and result.metadata["score"] == 0.0
    assert episode.summary()["done"] is True and episode.score == 0.0
    with pytest.raises(RuntimeError, match="reset first"):
        episode.step("look")
    episode.close()
    assert step_metadata({"score": np.float64(0.5), "other": 1}) == {"score": 0.5}
