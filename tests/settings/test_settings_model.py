from __future__ import annotations

from pathlib import Path

import pytest

from agents.settings.model import ConfigError, load_settings

SEALING_KEY = "qJzH8m5cF1oYbXw2V0kT9rE3uN6pL4sAaGdQeWiZyMc="
SECRET_KEY_TEXT = "-----BEGIN PRIVATE KEY-----\nSUPERSECRETKEYMATERIAL\n-----END PRIVATE KEY-----\n"


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("SWARM_") or name.startswith("ANTHROPIC_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)


def test_defaults_need_no_settings() -> None:
    settings = load_settings()
    assert settings.github_api_url == "https://api.github.com"
    assert settings.all_identities() == {}
    assert settings.resolved_store_url().startswith("sqlite:///")


def test_enterprise_api_url_is_accepted_without_trailing_slash(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_GITHUB_API_URL", "http://ghe.internal/api/v3/")
    assert load_settings().github_api_url == "http://ghe.internal/api/v3"


def test_flat_app_settings_become_the_default_identity(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    key = tmp_path / "key.pem"
    key.write_text(SECRET_KEY_TEXT)
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    monkeypatch.setenv("SWARM_APP_PRIVATE_KEY_FILE", str(key))
    monkeypatch.setenv("SWARM_APP_INSTALLATION_ID", "2001")
    ident = load_settings().identity("default")
    assert (ident.kind, ident.app_id, ident.installation_id) == ("app", 1001, 2001)
    assert ident.private_key_pem().get_secret_value() == SECRET_KEY_TEXT


def test_several_named_app_identities_are_expressible(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, app, inst in (("REVIEW", 1001, 2001), ("TRIAGE", 1002, 2002)):
        monkeypatch.setenv(f"SWARM_IDENTITIES__{name}__APP_ID", str(app))
        monkeypatch.setenv(
            f"SWARM_IDENTITIES__{name}__PRIVATE_KEY_FILE", str(tmp_path / f"{name}.pem")
        )
        monkeypatch.setenv(f"SWARM_IDENTITIES__{name}__INSTALLATION_ID", str(inst))
    settings = load_settings()
    assert settings.identity("triage").app_id == 1002
    assert settings.identity("review").installation_id == 2001


def test_incomplete_default_identity_names_the_missing_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert "SWARM_APP_PRIVATE_KEY_FILE" in str(err.value)
    assert "SWARM_APP_INSTALLATION_ID" in str(err.value)


def test_unknown_identity_error_lists_known_ones_and_how_to_set_it() -> None:
    with pytest.raises(
        ConfigError, match=r"identity 'triage' is not configured .*SWARM_IDENTITIES__TRIAGE__APP_ID"
    ):
        load_settings().identity("triage")


def test_bad_values_are_named_and_secrets_never_echoed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_GITHUB_API_URL", "ftp://nope")
    monkeypatch.setenv("SWARM_APP_ID", "not-a-number")
    monkeypatch.setenv("SWARM_SEALING_KEY", "sealing-secret-value-123")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-plantedsecret")
    with pytest.raises(ConfigError) as err:
        load_settings()
    text = str(err.value)
    assert "SWARM_GITHUB_API_URL: must start with http:// or https://" in text
    assert "SWARM_APP_ID" in text
    assert "not-a-number" not in text
    assert "sealing-secret-value-123" not in text
    assert "plantedsecret" not in text


def test_missing_key_file_is_named_when_read(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    monkeypatch.setenv("SWARM_APP_PRIVATE_KEY_FILE", "/nonexistent/key.pem")
    monkeypatch.setenv("SWARM_APP_INSTALLATION_ID", "2001")
    with pytest.raises(
        ConfigError, match=r"private_key_file: file /nonexistent/key\.pem does not exist"
    ):
        load_settings().identity("default").private_key_pem()


def test_repos_setting_accepts_a_comma_list_and_checks_shape(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_REPOS", "acme/widgets, acme/gadgets")
    assert load_settings().repos == ["acme/widgets", "acme/gadgets"]
    monkeypatch.setenv("SWARM_REPOS", "acme")
    with pytest.raises(ConfigError, match="SWARM_REPOS: 'acme' is not OWNER/NAME"):
        load_settings()


def test_secrets_folder_supplies_the_key_file_and_sealing_key(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SWARM_APP_ID", "1001")
    monkeypatch.setenv("SWARM_APP_INSTALLATION_ID", "2001")
    secrets = tmp_path / "secrets"
    secrets.mkdir()
    (secrets / "app-private-key.pem").write_text(SECRET_KEY_TEXT)
    (secrets / "sealing-key").write_text(SEALING_KEY + "\n")
    settings = load_settings()
    assert settings.app_private_key_file == Path("secrets/app-private-key.pem")
    assert settings.sealing_key is not None
    assert settings.sealing_key.get_secret_value() == SEALING_KEY
    assert SEALING_KEY not in repr(settings)


def test_bot_pat_identity_needs_a_token_and_login(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_IDENTITIES__BOT__KIND", "bot_pat")
    with pytest.raises(
        ConfigError, match="SWARM_IDENTITIES__BOT: a 'bot_pat' identity needs token_file, bot_login"
    ):
        load_settings()


def test_roles_dir_falls_back_to_the_shipped_roles_outside_the_repository() -> None:
    roles = load_settings().roles_dir
    assert roles.is_absolute()
    assert (roles / "reviewer.yaml").is_file()


def test_log_level_is_read_in_any_case_and_a_wrong_one_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert load_settings().log_level == "INFO"
    monkeypatch.setenv("SWARM_LOG_LEVEL", "debug")
    assert load_settings().log_level == "DEBUG"
    monkeypatch.setenv("SWARM_LOG_LEVEL", "chatty")
    with pytest.raises(ConfigError, match="SWARM_LOG_LEVEL"):
        load_settings()


@pytest.mark.parametrize(
    ("name", "hint"),
    [
        ("SWARM_STORE_ULR", " (did you mean SWARM_STORE_URL?)"),
        ("swarm_repo", " (did you mean SWARM_REPOS?)"),
        ("SWARM_IDENTITIES__TRIAGE__APPID", " (did you mean SWARM_IDENTITIES__TRIAGE__APP_ID?)"),
        ("SWARM_COLOUR", ""),
    ],
)
def test_an_unknown_swarm_variable_is_an_error_with_a_hint_and_no_value(
    name: str, hint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(name, "sk-ant-api03-valueNeverShown")
    with pytest.raises(ConfigError) as err:
        load_settings()
    assert str(err.value).startswith(f"{name} is not a swarm setting{hint}; ")
    assert "valueNeverShown" not in str(err.value)


def test_every_field_and_nested_identity_field_is_a_known_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("SWARM_IDENTITIES__BOT__KIND", "bot_pat")
    monkeypatch.setenv("SWARM_IDENTITIES__BOT__TOKEN_FILE", str(tmp_path / "pat"))
    monkeypatch.setenv("SWARM_IDENTITIES__BOT__BOT_LOGIN", "acme-bot")
    monkeypatch.setenv("SWARM_RETENTION_DAYS", "7")
    assert load_settings().identity("bot").bot_login == "acme-bot"


def test_deliberate_extras_are_allowed_by_name_or_prefix(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWARM_DEPLOY_COLOR", "blue")
    monkeypatch.setenv("SWARM_OWNER_TEAM", "platform")
    monkeypatch.setenv("SWARM_ALLOW_UNKNOWN", "SWARM_DEPLOY_*, swarm_owner_team")
    assert load_settings().retention_days == 30


def test_the_test_suites_own_variables_are_not_taken_for_settings(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    assert load_settings().retention_days == 30
    monkeypatch.setenv("SWARM_TESTS", "1")  # the prefix is SWARM_TEST_, not any SWARM_TEST
    with pytest.raises(ConfigError, match="SWARM_TESTS is not a swarm setting"):
        load_settings()


def test_github_limits_are_set_field_by_field_and_a_wrong_one_is_named(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SWARM_GITHUB_LIMITS__REST_POINTS_PER_MINUTE", "5000")
    limits = load_settings().github_limits
    assert (limits.rest_points_per_minute, limits.graphql_points_per_minute) == (5000, 2000)
    monkeypatch.setenv("SWARM_GITHUB_LIMITS__REST_POINTS_PER_MINUTE", "0")
    with pytest.raises(ConfigError, match="SWARM_GITHUB_LIMITS__REST_POINTS_PER_MINUTE"):
        load_settings()
    monkeypatch.delenv("SWARM_GITHUB_LIMITS__REST_POINTS_PER_MINUTE")
    monkeypatch.setenv("SWARM_GITHUB_LIMITS__REST_POINTS", "5000")
    with pytest.raises(
        ConfigError, match="SWARM_GITHUB_LIMITS__REST_POINTS is not a swarm setting"
    ):
        load_settings()
